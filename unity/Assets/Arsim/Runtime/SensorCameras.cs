using System;
using System.Collections.Generic;
using Arsim.Core;
using UnityEngine;
using UnityEngine.Experimental.Rendering;
using UnityEngine.Rendering;
using Object = UnityEngine.Object;

namespace Arsim.Runtime
{
    /// <summary>Camera sensors on the GPU (built-in render pipeline): a pooled, disabled Camera
    /// per (car, sensor) renders on demand into its own targets: colour through the normal
    /// pipeline, then depth and class ids with replacement shaders into float targets that
    /// are cleared to 0, which reads back as "nothing" (+inf, Labels.None). Each image is read
    /// back at once (AsyncGPUReadback + WaitForCompletion: the reply needs it this step) and
    /// flipped, since Unity's render textures keep row 0 at the bottom.</summary>
    public sealed class SensorCameras : IDisposable
    {
        public const string DepthShaderName = "Hidden/Arsim/LinearDepth";
        public const string ClassIdShaderName = "Hidden/Arsim/ClassId";
        readonly Transform parent;
        readonly Shader depthShader, classIdShader;
        readonly Dictionary<string, Rig> rigs = new Dictionary<string, Rig>();

        public SensorCameras(Transform parent, Shader depth, Shader classId)
        {
            this.parent = parent;
            depthShader = depth != null ? depth : Shader.Find(DepthShaderName);
            classIdShader = classId != null ? classId : Shader.Find(ClassIdShaderName);
            // Renderers without a TrackLabel (scenery) read the global: no class.
            Shader.SetGlobalFloat(TrackLabel.ClassIdProperty, Labels.None);
        }

        public void Render(CameraView view, CameraImages images)
        {
            if (!SystemInfo.supportsAsyncGPUReadback)
                throw new NotSupportedException("this graphics device has no GPU readback (SystemInfo.supportsAsyncGPUReadback); try -force-vulkan or -force-glcore");
            var rig = RigFor(view);
            rig.Aim(view);
            images.Rgb = view.Rgb ? rig.Colour() : new byte[0];
            images.Depth = view.Depth ? rig.Depth(Require(depthShader, DepthShaderName)) : new float[0];
            images.Semantic = view.Semantic ? rig.Semantic(Require(classIdShader, ClassIdShaderName)) : new byte[0];
        }

        static Shader Require(Shader shader, string name)
        {
            if (shader == null)
                throw new InvalidOperationException("the shader '" + name + "' is not in this build; assign it to ArsimServer");
            return shader;
        }

        Rig RigFor(CameraView view)
        {
            var key = view.Car + "/" + view.Sensor;
            Rig rig;
            if (!rigs.TryGetValue(key, out rig)) rigs[key] = rig = new Rig(key, parent);
            return rig;
        }

        public void Dispose()
        {
            foreach (var rig in rigs.Values) rig.Dispose();
            rigs.Clear();
        }

        /// <summary>One sensor's camera, its render targets (made at the sensor's size) and
        /// the managed buffers the readbacks are copied into.</summary>
        sealed class Rig : IDisposable
        {
            readonly Camera camera;
            int width, height;
            float far;
            RenderTexture colourTarget, depthTarget, classTarget;
            byte[] rgba = new byte[0];
            float[] values = new float[0];

            public Rig(string name, Transform parent)
            {
                var holder = new GameObject("Camera " + name);
                holder.transform.SetParent(parent, false);
                camera = holder.AddComponent<Camera>();
                camera.enabled = false;  // renders only when asked
                camera.clearFlags = CameraClearFlags.SolidColor;
                camera.renderingPath = RenderingPath.Forward;
                camera.allowHDR = false;
                camera.allowMSAA = false;  // a class id or depth must never be blended
                camera.useOcclusionCulling = false;
            }

            /// <summary>The view's pose and pinhole: Unity's fieldOfView is vertical, the
            /// protocol's fov horizontal; the principal point is the centre in both.</summary>
            public void Aim(CameraView view)
            {
                if (view.Width != width || view.Height != height) Resize(view.Width, view.Height);
                camera.transform.SetPositionAndRotation(UnityAxes.Position(view.Pose), UnityAxes.Orientation(view.Pose));
                var vertical = 2.0 * Math.Atan(Math.Tan(view.Fov / 2.0) * view.Height / view.Width);
                camera.fieldOfView = (float)(vertical * Mathf.Rad2Deg);
                camera.aspect = (float)view.Width / view.Height;
                camera.nearClipPlane = Mathf.Max((float)view.Near, 1e-4f);  // Unity needs a positive near plane
                camera.farClipPlane = far = (float)view.Far;
            }

            public byte[] Colour()
            {
                camera.targetTexture = colourTarget;
                camera.backgroundColor = LabelMaterials.Colour(Labels.None);  // the sky
                camera.Render();
                Read(colourTarget).GetData<byte>().CopyTo(rgba);
                var rgb = new byte[3 * width * height];
                for (var row = 0; row < height; row++)
                {
                    var from = 4 * (height - 1 - row) * width;
                    var to = 3 * row * width;
                    for (var u = 0; u < width; u++, from += 4, to += 3)
                    {
                        rgb[to] = rgba[from];
                        rgb[to + 1] = rgba[from + 1];
                        rgb[to + 2] = rgba[from + 2];
                    }
                }
                return rgb;
            }

            /// <summary>Linear eye depth: the distance along the optical axis. The far plane
            /// clips what lies beyond, which stays 0 and becomes +inf.</summary>
            public float[] Depth(Shader shader)
            {
                RenderValues(depthTarget, shader);
                var depth = new float[width * height];
                for (var row = 0; row < height; row++)
                {
                    var from = (height - 1 - row) * width;
                    var to = row * width;
                    for (var u = 0; u < width; u++)
                    {
                        var value = values[from + u];
                        depth[to + u] = value > 0f && value <= far ? value : float.PositiveInfinity;
                    }
                }
                return depth;
            }

            /// <summary>The class id of each pixel's renderer, drawn as id + 1 so that the
            /// cleared 0 means none.</summary>
            public byte[] Semantic(Shader shader)
            {
                RenderValues(classTarget, shader);
                var classes = new byte[width * height];
                for (var row = 0; row < height; row++)
                {
                    var from = (height - 1 - row) * width;
                    var to = row * width;
                    for (var u = 0; u < width; u++)
                    {
                        var id = Mathf.RoundToInt(values[from + u]) - 1;
                        classes[to + u] = id >= 0 && id < Labels.None ? (byte)id : Labels.None;
                    }
                }
                return classes;
            }

            void RenderValues(RenderTexture target, Shader shader)
            {
                camera.targetTexture = target;
                camera.backgroundColor = Color.clear;
                camera.RenderWithShader(shader, "");
                Read(target).GetData<float>().CopyTo(values);
            }

            static AsyncGPUReadbackRequest Read(RenderTexture target)
            {
                var request = AsyncGPUReadback.Request(target, 0);
                request.WaitForCompletion();
                if (request.hasError) throw new InvalidOperationException("reading back " + target.name + " from the GPU failed");
                return request;
            }

            void Resize(int newWidth, int newHeight)
            {
                Release();
                width = newWidth;
                height = newHeight;
                // sRGB storage in a linear-space project, so the bytes are rgb8 as cameras send it.
                var colour = QualitySettings.activeColorSpace == ColorSpace.Linear
                    ? GraphicsFormat.R8G8B8A8_SRGB : GraphicsFormat.R8G8B8A8_UNorm;
                colourTarget = Target("colour", colour);
                depthTarget = Target("depth", GraphicsFormat.R32_SFloat);
                classTarget = Target("class", GraphicsFormat.R32_SFloat);
                rgba = new byte[4 * width * height];
                values = new float[width * height];
            }

            RenderTexture Target(string what, GraphicsFormat format)
            {
                var target = new RenderTexture(width, height, 24, format) { name = camera.name + " " + what };
                target.Create();
                return target;
            }

            void Release()
            {
                camera.targetTexture = null;
                foreach (var target in new[] { colourTarget, depthTarget, classTarget })
                    if (target != null)
                    {
                        target.Release();
                        Object.Destroy(target);
                    }
            }

            public void Dispose()
            {
                Release();
                if (camera != null) Object.Destroy(camera.gameObject);
            }
        }
    }
}
