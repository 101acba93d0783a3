using System;
using System.Collections.Generic;

namespace Arsim.Core
{
    /// <summary>The cars' poses over the last frames, oldest first, covering at least KeepNs:
    /// a spinning LiDAR sweeps its columns during a revolution and casts each from where its
    /// car was then, against the other cars where they were (arsim_core.backend.timeline).</summary>
    public sealed class Timeline
    {
        readonly List<long> times = new List<long>();
        readonly List<IReadOnlyDictionary<string, Pose6>> frames = new List<IReadOnlyDictionary<string, Pose6>>();

        public Timeline(long keepNs) { KeepNs = keepNs; }

        public long KeepNs { get; }

        public int Count { get { return frames.Count; } }

        public long TimeAt(int index) { return times[index]; }

        public IReadOnlyDictionary<string, Pose6> PosesAt(int index) { return frames[index]; }

        /// <summary>Record a frame. A time at or before the last one (a restart) first forgets
        /// the frames from then on; frames older than needed to cover KeepNs are dropped.</summary>
        public void Add(long timeNs, IReadOnlyDictionary<string, Pose6> poses)
        {
            while (times.Count > 0 && times[times.Count - 1] >= timeNs) RemoveAt(times.Count - 1);
            times.Add(timeNs);
            frames.Add(poses);
            while (times.Count > 2 && times[1] <= timeNs - KeepNs) RemoveAt(0);
        }

        void RemoveAt(int index)
        {
            times.RemoveAt(index);
            frames.RemoveAt(index);
        }

        /// <summary>Index of the frame that closes the interval timeNs falls in: the first
        /// at or after it, the last for later times.</summary>
        public int FrameAfter(long timeNs)
        {
            for (var i = 0; i < times.Count; i++)
                if (times[i] >= timeNs) return i;
            return times.Count - 1;
        }

        /// <summary>One car's recorded poses, skipping the frames it is missing from (an
        /// Update may leave a car out: it moved straight through them).</summary>
        public PoseTrack TrackOf(string car)
        {
            var track = new PoseTrack();
            for (var i = 0; i < frames.Count; i++)
            {
                Pose6 pose;
                if (frames[i].TryGetValue(car, out pose)) track.Add(times[i], pose);
            }
            if (track.Count == 0) throw new InvalidOperationException("the timeline holds no pose of car '" + car + "'");
            return track;
        }
    }

    /// <summary>A car's poses at increasing times, interpolated in between.</summary>
    public sealed class PoseTrack
    {
        readonly List<long> times = new List<long>();
        readonly List<Pose6> poses = new List<Pose6>();

        public int Count { get { return poses.Count; } }

        internal void Add(long timeNs, Pose6 pose)
        {
            times.Add(timeNs);
            poses.Add(pose);
        }

        /// <summary>The pose at timeNs: linear between the two frames around it (angles the
        /// short way round), held before the first and after the last.</summary>
        public Pose6 At(long timeNs)
        {
            if (poses.Count == 1) return poses[0];
            var k = times.BinarySearch(timeNs);  // times increase strictly (Timeline.Add)
            k = k >= 0 ? k : ~k - 1;              // the last frame at or before timeNs
            k = Math.Max(0, Math.Min(times.Count - 2, k));
            var weight = Math.Max(0.0, Math.Min(1.0, (double)(timeNs - times[k]) / (times[k + 1] - times[k])));
            Pose6 a = poses[k], b = poses[k + 1];
            return new Pose6(a.X + weight * (b.X - a.X), a.Y + weight * (b.Y - a.Y), a.Z + weight * (b.Z - a.Z),
                             a.Roll + weight * Poses.Wrap(b.Roll - a.Roll),
                             a.Pitch + weight * Poses.Wrap(b.Pitch - a.Pitch),
                             a.Yaw + weight * Poses.Wrap(b.Yaw - a.Yaw));
        }
    }
}
