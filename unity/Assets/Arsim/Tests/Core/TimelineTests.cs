using System;
using System.Collections.Generic;
using NUnit.Framework;

namespace Arsim.Core.Tests
{
    [TestFixture]
    public class TimelineTests
    {
        static Dictionary<string, Pose6> Frame(string car, Pose6 pose)
        {
            return new Dictionary<string, Pose6> { { car, pose } };
        }

        [Test]
        public void PosesAreInterpolatedAndHeldOutsideTheFrames()
        {
            var timeline = new Timeline(1000);
            timeline.Add(100, Frame("a", new Pose6(0, 0, 0, 0, 0, 0)));
            timeline.Add(200, Frame("a", new Pose6(10, -2, 1, 0.2, 0, 0)));
            var track = timeline.TrackOf("a");
            var quarter = track.At(125);
            Assert.That(quarter.X, Is.EqualTo(2.5).Within(1e-12));
            Assert.That(quarter.Y, Is.EqualTo(-0.5).Within(1e-12));
            Assert.That(quarter.Z, Is.EqualTo(0.25).Within(1e-12));
            Assert.That(quarter.Roll, Is.EqualTo(0.05).Within(1e-12));
            Assert.AreEqual(0.0, track.At(50).X, "held before the first frame");
            Assert.AreEqual(10.0, track.At(500).X, "held after the last");
            Assert.AreEqual(10.0, track.At(200).X);
        }

        [Test]
        public void AnglesTakeTheShortWayRound()
        {
            var timeline = new Timeline(1000);
            timeline.Add(0, Frame("a", new Pose6(0, 0, 0, 0, 0, 3.0)));
            timeline.Add(100, Frame("a", new Pose6(0, 0, 0, 0, 0, -3.0)));
            var middle = timeline.TrackOf("a").At(50);
            Assert.That(Math.Abs(Poses.Wrap(middle.Yaw)), Is.EqualTo(Math.PI).Within(1e-9), "through pi, not through 0");
        }

        [Test]
        public void AFrameWithoutTheCarIsSkipped()
        {
            var timeline = new Timeline(1000);
            timeline.Add(0, Frame("a", new Pose6(0, 0, 0, 0, 0, 0)));
            timeline.Add(100, Frame("b", new Pose6(50, 0, 0, 0, 0, 0)));
            timeline.Add(200, Frame("a", new Pose6(4, 0, 0, 0, 0, 0)));
            Assert.That(timeline.TrackOf("a").At(100).X, Is.EqualTo(2).Within(1e-12));
            Assert.AreEqual(50.0, timeline.TrackOf("b").At(0).X, "a single pose is held");
            Assert.Throws<InvalidOperationException>(() => timeline.TrackOf("c"));
        }

        [Test]
        public void FrameAfterIsTheFrameClosingTheInterval()
        {
            var timeline = new Timeline(1000);
            var poses = Frame("a", new Pose6());
            timeline.Add(0, poses);
            timeline.Add(100, poses);
            timeline.Add(200, poses);
            Assert.AreEqual(0, timeline.FrameAfter(-5));
            Assert.AreEqual(0, timeline.FrameAfter(0));
            Assert.AreEqual(1, timeline.FrameAfter(1));
            Assert.AreEqual(1, timeline.FrameAfter(100));
            Assert.AreEqual(2, timeline.FrameAfter(150));
            Assert.AreEqual(2, timeline.FrameAfter(900), "the last for later times");
        }

        [Test]
        public void ATimeThatGoesBackForgetsTheLaterFrames()
        {
            var timeline = new Timeline(1000);
            var poses = Frame("a", new Pose6());
            timeline.Add(0, poses);
            timeline.Add(100, poses);
            timeline.Add(200, poses);
            timeline.Add(100, poses);
            Assert.AreEqual(2, timeline.Count);
            Assert.AreEqual(0, timeline.TimeAt(0));
            Assert.AreEqual(100, timeline.TimeAt(1));
        }

        [Test]
        public void OnlyTheFramesThatCoverKeepNsStay()
        {
            var timeline = new Timeline(75);
            var poses = Frame("a", new Pose6());
            for (var t = 0; t <= 200; t += 25) timeline.Add(t, poses);
            // 200 - 75 = 125: the frame at 125 must stay, to interpolate from it; the one before too, as the interval's start.
            Assert.AreEqual(4, timeline.Count);
            Assert.AreEqual(125, timeline.TimeAt(0));
            Assert.IsTrue(ReferenceEquals(poses, timeline.PosesAt(3)));
        }
    }
}
