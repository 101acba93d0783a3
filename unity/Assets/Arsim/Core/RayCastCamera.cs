using System;

namespace Arsim.Core
{
    /// <summary>A camera from one ray per pixel through IRenderer.CastRays, for renderers
    /// without a GPU: depth along the optical axis, the class hit, and the class colour
    /// shaded by the angle of incidence (ambient 0.35 plus 0.65 |cos|, a light at the camera)
    /// in 8-bit sRGB, as a GPU in linear colour space writes it; the sky colour where nothing
    /// is within far. Geometry nearer than near is clipped, as a rasteriser's near plane does.</summary>
    public static class RayCastCamera
    {
        const double Ambient = 0.35, Diffuse = 0.65;

        public static void Render(IRenderer renderer, CameraView view, CameraImages images)
        {
            int width = view.Width, height = view.Height, count = width * height;
            var focal = SensorGeometry.FocalLength(width, view.Fov);
            double cx = SensorGeometry.PrincipalPoint(width), cy = SensorGeometry.PrincipalPoint(height);
            var rotation = Rotation.Of(view.Pose);
            var rays = new RayBatch { Count = count, Origins = new float[3 * count], Directions = new float[3 * count], ExcludeCar = view.Car };
            var stretch = new double[count];  // ray length per metre of depth
            double longest = 0;
            for (var v = 0; v < height; v++)
            {
                for (var u = 0; u < width; u++)
                {
                    var i = v * width + u;
                    double right = (u - cx) / focal, down = (v - cy) / focal;  // optical frame, depth 1
                    var norm = Math.Sqrt(right * right + down * down + 1.0);
                    stretch[i] = norm;
                    longest = Math.Max(longest, norm);
                    var body = rotation.Apply(1.0 / norm, -right / norm, -down / norm);  // x forward, y left, z up
                    var start = view.Near * norm;  // the ray starts on the near plane
                    rays.Origins[3 * i] = (float)(view.Pose.X + body.X * start);
                    rays.Origins[3 * i + 1] = (float)(view.Pose.Y + body.Y * start);
                    rays.Origins[3 * i + 2] = (float)(view.Pose.Z + body.Z * start);
                    rays.Directions[3 * i] = (float)body.X;
                    rays.Directions[3 * i + 1] = (float)body.Y;
                    rays.Directions[3 * i + 2] = (float)body.Z;
                }
            }
            // The far plane is a plane: the corner rays reach furthest; each pixel's depth is
            // cut at far below.
            rays.MaxDistance = (float)((view.Far - view.Near) * longest);
            var hits = new RayHits();
            hits.Ensure(count);
            renderer.CastRays(rays, hits);
            images.Rgb = view.Rgb ? new byte[3 * count] : new byte[0];
            images.Depth = view.Depth ? new float[count] : new float[0];
            images.Semantic = view.Semantic ? new byte[count] : new byte[0];
            for (var i = 0; i < count; i++)
            {
                var depth = view.Near + hits.Distance[i] / stretch[i];
                var seen = !float.IsInfinity(hits.Distance[i]) && depth <= view.Far;
                var label = seen ? hits.Label[i] : Labels.None;
                if (view.Depth) images.Depth[i] = seen ? (float)depth : float.PositiveInfinity;
                if (view.Semantic) images.Semantic[i] = label;
                if (view.Rgb) Shade(label, seen ? Ambient + Diffuse * hits.Cosine[i] : 1.0, images.Rgb, 3 * i);
            }
        }

        static void Shade(byte label, double light, byte[] rgb, int at)
        {
            double r, g, b;
            Labels.Color(label, out r, out g, out b);
            rgb[at] = Srgb(r * light);
            rgb[at + 1] = Srgb(g * light);
            rgb[at + 2] = Srgb(b * light);
        }

        /// <summary>A linear value 0..1 as an 8-bit sRGB value (IEC 61966-2-1).</summary>
        static byte Srgb(double linear)
        {
            linear = Math.Max(0.0, Math.Min(1.0, linear));
            var encoded = linear <= 0.0031308 ? 12.92 * linear : 1.055 * Math.Pow(linear, 1.0 / 2.4) - 0.055;
            return (byte)Math.Round(255.0 * encoded);
        }
    }
}
