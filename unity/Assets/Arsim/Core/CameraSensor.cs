using System;
using System.Collections.Generic;

namespace Arsim.Core
{
    /// <summary>A pinhole camera rendered from the car's pose at the Update, stamped with its
    /// time: rgb8 uint8 [h, w, 3], depth 32FC1 float32 [h, w] (+inf: nothing within far) and
    /// semantic mono8 uint8 [h, w], in the order the spec lists them, with the scenario's
    /// pixel and depth noise. The noise of a frame is drawn from the seed and the frame time
    /// only, as the embedded backend draws it.</summary>
    public sealed class CameraSensor : Sensor
    {
        readonly CameraSpec spec;
        readonly ulong seed;
        readonly CameraView view;

        public CameraSensor(string car, CameraSpec spec, ulong seed) : base(car, spec)
        {
            this.spec = spec;
            this.seed = seed;
            view = new CameraView
            {
                Car = car, Sensor = spec.Name, Width = spec.Width, Height = spec.Height, Fov = spec.Fov, Near = spec.Near,
                Far = spec.Far, Rgb = spec.Wants(CameraSpec.Rgb), Depth = spec.Wants(CameraSpec.Depth),
                Semantic = spec.Wants(CameraSpec.Semantic),
            };
        }

        public override void Render(RenderContext context, List<BinaryFrame> frames)
        {
            view.Pose = Poses.Compose(context.PoseNow(Car), spec.Mount);
            var images = new CameraImages();
            context.Renderer.RenderCamera(view, images);
            CheckSizes(context.Renderer.Name, images);
            var noise = SensorNoise.ForFrame(seed, context.TimeNs);
            int h = spec.Height, w = spec.Width;
            foreach (var output in spec.Outputs)
            {
                switch (output)
                {
                    case CameraSpec.Rgb:
                        AddColourNoise(images.Rgb, noise);
                        frames.Add(Describe(BinaryFrame.Of(FrameName("/rgb"), images.Rgb, h, w, 3), "rgb8", context.TimeNs));
                        break;
                    case CameraSpec.Depth:
                        AddDepthNoise(images.Depth, noise);
                        frames.Add(Describe(BinaryFrame.Of(FrameName("/depth"), images.Depth, h, w), "32FC1", context.TimeNs));
                        break;
                    default:
                        frames.Add(Describe(BinaryFrame.Of(FrameName("/semantic"), images.Semantic, h, w), "mono8", context.TimeNs));
                        break;
                }
            }
        }

        /// <summary>A renderer that fills an image of the wrong size is named, before the
        /// reply would fail on a frame whose bytes do not match its shape.</summary>
        void CheckSizes(string renderer, CameraImages images)
        {
            long pixels = (long)spec.Width * spec.Height;
            if ((view.Rgb && images.Rgb.LongLength != 3 * pixels) || (view.Depth && images.Depth.LongLength != pixels) ||
                (view.Semantic && images.Semantic.LongLength != pixels))
                throw new InvalidOperationException("renderer " + renderer + " returned images of the wrong size for camera '" +
                                                    Car + "/" + Name + "' (" + spec.Width + "x" + spec.Height + ")");
        }

        void AddColourNoise(byte[] rgb, SensorNoise noise)
        {
            if (spec.NoiseStd <= 0) return;
            for (var i = 0; i < rgb.Length; i++)
                rgb[i] = (byte)Math.Max(0.0, Math.Min(255.0, Math.Round(rgb[i] + noise.NextGaussian() * spec.NoiseStd)));
        }

        /// <summary>Noise on what was seen; +inf (nothing within far) stays.</summary>
        void AddDepthNoise(float[] depth, SensorNoise noise)
        {
            if (spec.DepthNoiseStd <= 0) return;
            for (var i = 0; i < depth.Length; i++)
                if (!float.IsInfinity(depth[i])) depth[i] += (float)(noise.NextGaussian() * spec.DepthNoiseStd);
        }
    }
}
