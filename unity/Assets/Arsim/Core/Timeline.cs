using System;
using System.Collections.Generic;

namespace Arsim.Core
{
    /// <summary>The cars' poses over the last frames, so a spinning LiDAR, which sweeps its
    /// columns during a revolution, casts each from where the car was then (as
    /// arsim_core.backend.timeline).</summary>
    public sealed class Timeline
    {
        readonly List<KeyValuePair<long, Dictionary<string, Pose6>>> frames =
            new List<KeyValuePair<long, Dictionary<string, Pose6>>>();

        public long KeepNs;

        public Timeline(long keepNs = 0) { KeepNs = keepNs; }

        public int Count { get { return frames.Count; } }

        public long TimeAt(int index) { return frames[index].Key; }

        public IReadOnlyDictionary<string, Pose6> PosesAt(int index) { return frames[index].Value; }

        /// <summary>Record a frame; a time that goes back (a restart) forgets the later ones.</summary>
        public void Add(long timeNs, Dictionary<string, Pose6> poses)
        {
            while (frames.Count > 0 && frames[frames.Count - 1].Key >= timeNs) frames.RemoveAt(frames.Count - 1);
            frames.Add(new KeyValuePair<long, Dictionary<string, Pose6>>(timeNs, poses));
            while (frames.Count > 2 && frames[1].Key <= timeNs - KeepNs) frames.RemoveAt(0);
        }

        public void Clear() { frames.Clear(); }

        /// <summary>Index of the frame that closes the interval timeNs falls in (the first at
        /// or after it; the last for later times).</summary>
        public int FrameAfter(long timeNs)
        {
            for (var i = 0; i < frames.Count; i++)
                if (frames[i].Key >= timeNs) return i;
            return frames.Count - 1;
        }

        /// <summary>The car's pose at timeNs: linear between frames (angles the short way
        /// round), held outside them; frames without the car are skipped.</summary>
        public Pose6 PoseAt(string car, long timeNs)
        {
            var times = new List<long>();
            var track = new List<Pose6>();
            foreach (var frame in frames)
            {
                Pose6 pose;
                if (frame.Value.TryGetValue(car, out pose))
                {
                    times.Add(frame.Key);
                    track.Add(pose);
                }
            }
            if (track.Count == 0) throw new ProtocolException("no pose of car '" + car + "'");
            if (track.Count == 1) return track[0];
            var k = times.Count - 2;
            for (var i = 0; i < times.Count - 1; i++)
                if (times[i + 1] > timeNs) { k = i; break; }
            var weight = Math.Max(0.0, Math.Min(1.0, (double)(timeNs - times[k]) / (times[k + 1] - times[k])));
            Pose6 a = track[k], b = track[k + 1];
            return new Pose6(a.X + weight * (b.X - a.X), a.Y + weight * (b.Y - a.Y), a.Z + weight * (b.Z - a.Z),
                             a.Roll + weight * Poses.Wrap(b.Roll - a.Roll),
                             a.Pitch + weight * Poses.Wrap(b.Pitch - a.Pitch),
                             a.Yaw + weight * Poses.Wrap(b.Yaw - a.Yaw));
        }
    }
}
