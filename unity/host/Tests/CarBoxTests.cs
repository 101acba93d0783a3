using System;
using Arsim.Core;
using NUnit.Framework;

namespace Arsim.Host.Tests
{
    [TestFixture]
    public class CarBoxTests
    {
        static readonly TrackMesh Room = Meshes.Room(20f);

        [Test]
        public void ATurnedBoxIsHitOnItsCornerAsClassCar()
        {
            var caster = Meshes.Caster(Room, Meshes.Car("other", 5, 0, 0, 0, 0, Math.PI / 4, 2, 2, 0.5));
            var hits = Meshes.Cast(caster, 0, 0, 0.2, 1, 0, 0);
            Assert.That(hits.Distance[0], Is.EqualTo(5 - Math.Sqrt(2)).Within(1e-6), "the corner of the turned box");
            Assert.AreEqual(Labels.Car, hits.Label[0]);
            Assert.That(hits.Cosine[0], Is.EqualTo(Math.Sqrt(0.5)).Within(1e-6));
        }

        [Test]
        public void TheObservingCarsOwnBoxIsNotSeen()
        {
            var caster = Meshes.Caster(Room, Meshes.Car("ego", 0, 0, 0, 0, 0, 0, 1, 1, 0.5),
                                       Meshes.Car("other", -5, 0, 0, 0, 0, 0, 1, 1, 0.5));
            var fromEgo = Meshes.Cast(caster, 0, 0, 0.2, 1, 0, 0, 100f, "ego");
            Assert.That(fromEgo.Distance[0], Is.EqualTo(20.0).Within(1e-6), "through its own box to the wall");
            Assert.AreEqual(Labels.Barrier, fromEgo.Label[0]);
            var behind = Meshes.Cast(caster, 0, 0, 0.2, -1, 0, 0, 100f, "ego");
            Assert.That(behind.Distance[0], Is.EqualTo(4.5).Within(1e-6), "the other car still is");
            Assert.AreEqual(Labels.Car, behind.Label[0]);
            var nobody = Meshes.Cast(caster, 0, 0, 0.2, 1, 0, 0, 100f, null);
            Assert.That(nobody.Distance[0], Is.EqualTo(0.5).Within(1e-6), "excluding no car: from inside its box, its far side");
        }

        [Test]
        public void ABoxSpansFromThePosesHeightUpByItsHeight()
        {
            var caster = Meshes.Caster(Room, Meshes.Car("other", 5, 0, 0.3, 0, 0, 0, 1, 1, 0.5));
            Assert.AreEqual(Labels.Barrier, Meshes.Cast(caster, 0, 0, 0.2, 1, 0, 0).Label[0], "below the box");
            var through = Meshes.Cast(caster, 0, 0, 0.5, 1, 0, 0);
            Assert.AreEqual(Labels.Car, through.Label[0]);
            Assert.That(through.Distance[0], Is.EqualTo(4.5).Within(1e-6));
            Assert.AreEqual(Labels.Barrier, Meshes.Cast(caster, 0, 0, 0.9, 1, 0, 0).Label[0], "above the box");
            var top = Meshes.Cast(caster, 5, 0, 3, 0, 0, -1);
            Assert.That(top.Distance[0], Is.EqualTo(2.2).Within(1e-6), "its roof at z = 0.8");
            Assert.That(top.Cosine[0], Is.EqualTo(1.0).Within(1e-9));
        }

        [Test]
        public void PitchTurnsTheBoxAboutItsYAxisAsRzRyRxSays()
        {
            // Pitched by 90 degrees, the box's x axis points down and its z (height) axis
            // forward: 2 m tall about z = 5, 1 m wide, 0.5 m deep from x = 0 to x = 0.5.
            var caster = Meshes.Caster(Room, Meshes.Car("other", 0, 0, 5, 0, Math.PI / 2, 0, 2, 1, 0.5));
            var side = Meshes.Cast(caster, 0.25, -10, 5, 0, 1, 0);
            Assert.That(side.Distance[0], Is.EqualTo(9.5).Within(1e-6));
            Assert.That(side.Cosine[0], Is.EqualTo(1.0).Within(1e-9));
            Assert.AreEqual(Labels.None, Meshes.Cast(caster, -0.1, -10, 5, 0, 1, 0).Label[0], "behind its base");
            Assert.AreEqual(Labels.Car, Meshes.Cast(caster, 0.25, -10, 5.9, 0, 1, 0).Label[0]);
            Assert.AreEqual(Labels.None, Meshes.Cast(caster, 0.25, -10, 6.1, 0, 1, 0).Label[0], "above its length");
            Assert.That(Meshes.Cast(caster, 10, 0, 5, -1, 0, 0).Distance[0], Is.EqualTo(9.5).Within(1e-6), "its roof faces +x");
        }

        [Test]
        public void RollTurnsTheBoxAboutItsXAxis()
        {
            // Rolled by 90 degrees, the box's y axis points up and its z axis to -y: from
            // y = 0 down to y = -0.5, and 1 m tall about z = 0.
            var caster = Meshes.Caster(new TrackMesh(), Meshes.Car("other", 0, 0, 0, Math.PI / 2, 0, 0, 2, 1, 0.5));
            Assert.That(Meshes.Cast(caster, 0, -10, 0, 0, 1, 0).Distance[0], Is.EqualTo(9.5).Within(1e-6));
            Assert.That(Meshes.Cast(caster, 0, 10, 0, 0, -1, 0).Distance[0], Is.EqualTo(10.0).Within(1e-6));
            Assert.That(Meshes.Cast(caster, 0, 10, 0.45, 0, -1, 0).Distance[0], Is.EqualTo(10.0).Within(1e-6));
            Assert.AreEqual(Labels.None, Meshes.Cast(caster, 0, 10, 0.55, 0, -1, 0).Label[0]);
        }

        [Test]
        public void ATurnedPitchedRolledBoxGivesTheEmbeddedBackendsHits()
        {
            // Reference values from arsim_core.backend.boxes.BoxLayer (float32 rays), for a
            // 0.58 x 0.31 x 0.25 box at (2, 1, 0.1), roll 0.2, pitch -0.3, yaw 0.7.
            var caster = Meshes.Caster(new TrackMesh(), Meshes.Car("other", 2, 1, 0.1, 0.2, -0.3, 0.7, 0.58, 0.31, 0.25));
            var origins = new[] { 0f, 0, 0.2f, 0, 0, 0.2f, 2, 1, 0.2f, 4, 3, 1 };
            var directions = new[]
            {
                0.8944271802902222f, 0.4472135901451111f, 0f,
                0.8853632211685181f, 0.4648156762123108f, 0.008853632025420666f,
                1f, 0f, 0f,
                -0.6738170981407166f, -0.6738170981407166f, -0.30321770906448364f,
            };
            var hits = Meshes.Cast(caster, origins, directions);
            double[] distance = { 1.8920111656188965, 1.8959813117980957, 0.25725945830345154, 2.968170166015625 };
            double[] cosine = { 0.928776741027832, 0.26623010635375977, 0.6762807369232178, 0.007235198747366667 };
            for (var i = 0; i < 4; i++)
            {
                Assert.That(hits.Distance[i], Is.EqualTo(distance[i]).Within(1e-6), "ray " + i);
                Assert.That(hits.Cosine[i], Is.EqualTo(cosine[i]).Within(1e-6), "ray " + i);
                Assert.AreEqual(Labels.Car, hits.Label[i], "ray " + i);
            }
        }

        [Test]
        public void ARayStartingOnAFaceSeesTheBoxOnlyIfItPointsInside()
        {
            var caster = Meshes.Caster(new TrackMesh(), Meshes.Car("other", 0, 0, 0, 0, 0, 0, 2, 1, 0.5));
            Assert.AreEqual(Labels.None, Meshes.Cast(caster, 1, 0, 0.25, 1, 0, 0).Label[0], "outwards");
            Assert.That(Meshes.Cast(caster, 1, 0, 0.25, -1, 0, 0).Distance[0], Is.EqualTo(2.0).Within(1e-6), "inwards: the far face");
        }

        [Test]
        public void TheNearerOfTrackAndBoxIsSeen()
        {
            var hidden = Meshes.Caster(Meshes.Room(5f), Meshes.Car("other", 7, 0, 0, 0, 0, 0, 1, 1, 0.5));
            Assert.AreEqual(Labels.Barrier, Meshes.Cast(hidden, 0, 0, 0.2, 1, 0, 0).Label[0], "behind the wall");
            var shown = Meshes.Caster(Meshes.Room(5f), Meshes.Car("other", 3, 0, 0, 0, 0, 0, 1, 1, 0.5));
            var hits = Meshes.Cast(shown, 0, 0, 0.2, 1, 0, 0);
            Assert.AreEqual(Labels.Car, hits.Label[0]);
            Assert.That(hits.Distance[0], Is.EqualTo(2.5).Within(1e-6));
            var twoCars = Meshes.Caster(Meshes.Room(5f), Meshes.Car("far", 3, 0, 0, 0, 0, 0, 1, 1, 0.5),
                                        Meshes.Car("near", 2, 0, 0, 0, 0, 0, 1, 1, 0.5));
            Assert.That(Meshes.Cast(twoCars, 0, 0, 0.2, 1, 0, 0).Distance[0], Is.EqualTo(1.5).Within(1e-6), "the nearer car");
        }

        [Test]
        public void ABoxBeyondTheRangeIsNotSeenAndNewCarsReplaceTheOld()
        {
            var caster = Meshes.Caster(new TrackMesh(), Meshes.Car("other", 5, 0, 0, 0, 0, 0, 1, 1, 0.5));
            Assert.AreEqual(Labels.None, Meshes.Cast(caster, 0, 0, 0.2, 1, 0, 0, 4f).Label[0]);
            Assert.AreEqual(4.5f, Meshes.Cast(caster, 0, 0, 0.2, 1, 0, 0, 4.5f).Distance[0], "a face at the range itself");
            caster.SetCars(new CarBox[0]);
            Assert.AreEqual(Labels.None, Meshes.Cast(caster, 0, 0, 0.2, 1, 0, 0).Label[0]);
        }
    }
}
