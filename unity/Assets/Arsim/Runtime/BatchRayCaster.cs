using System;
using System.Collections.Generic;
using Arsim.Core;
using Unity.Collections;
using Unity.Jobs;
using UnityEngine;

namespace Arsim.Runtime
{
    /// <summary>LiDAR rays on PhysX: RaycastCommand batches over the scene's colliders, run on
    /// the job workers, with the class of what each ray hit read from its collider's
    /// TrackLabel (colliders without one count as barrier, the protocol's class for unlabelled
    /// geometry). Back faces are hit: the track's winding is not fixed by the protocol.</summary>
    public sealed class BatchRayCaster
    {
        const int ChunkRays = 1 << 18;  // bounds the native buffers (~25 MB) for 2^24-ray sensors
        const int MinCommandsPerJob = 64;
        readonly Dictionary<int, byte> labels = new Dictionary<int, byte>();
        readonly QueryParameters query = new QueryParameters(
            Physics.DefaultRaycastLayers, false, QueryTriggerInteraction.Ignore, true);

        /// <summary>Drop the cached classes of colliders (after the track is replaced).</summary>
        public void ForgetColliders() { labels.Clear(); }

        public void Cast(RayBatch rays, RayHits hits)
        {
            hits.Ensure(rays.Count);
            // Physics runs by script: moved proxies reach PhysX only when synced.
            Physics.SyncTransforms();
            for (var first = 0; first < rays.Count; first += ChunkRays)
                CastChunk(rays, hits, first, Math.Min(ChunkRays, rays.Count - first));
        }

        void CastChunk(RayBatch rays, RayHits hits, int first, int count)
        {
            var commands = new NativeArray<RaycastCommand>(count, Allocator.TempJob, NativeArrayOptions.UninitializedMemory);
            var results = new NativeArray<RaycastHit>(count, Allocator.TempJob);  // cleared: a miss stays empty
            try
            {
                for (var i = 0; i < count; i++)
                {
                    var k = 3 * (first + i);
                    commands[i] = new RaycastCommand(UnityAxes.Point(rays.Origins, k), UnityAxes.Point(rays.Directions, k),
                                                     query, rays.MaxDistance);
                }
                RaycastCommand.ScheduleBatch(commands, results, MinCommandsPerJob, 1, default(JobHandle)).Complete();
                for (var i = 0; i < count; i++)
                {
                    var hit = results[i];
                    var at = first + i;
                    if (hit.colliderInstanceID == 0)
                    {
                        hits.Distance[at] = float.PositiveInfinity;
                        hits.Label[at] = Labels.None;
                        hits.Cosine[at] = 0f;
                        continue;
                    }
                    hits.Distance[at] = hit.distance;
                    hits.Label[at] = LabelOf(hit);
                    hits.Cosine[at] = Mathf.Abs(Vector3.Dot(commands[i].direction.normalized, hit.normal));
                }
            }
            finally
            {
                commands.Dispose();
                results.Dispose();
            }
        }

        byte LabelOf(RaycastHit hit)
        {
            byte label;
            if (!labels.TryGetValue(hit.colliderInstanceID, out label))
            {
                var tag = hit.collider.GetComponent<TrackLabel>();  // main thread: the jobs are done
                label = tag != null ? tag.Label : Labels.Barrier;
                labels[hit.colliderInstanceID] = label;
            }
            return label;
        }
    }
}
