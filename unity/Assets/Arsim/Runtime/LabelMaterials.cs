using System;
using System.Collections.Generic;
using Arsim.Core;
using UnityEngine;
using Object = UnityEngine.Object;

namespace Arsim.Runtime
{
    /// <summary>One material per semantic class, in the class's colour (Labels.Color), shared by
    /// every track piece and car proxy of that class.</summary>
    public sealed class LabelMaterials : IDisposable
    {
        public const string DefaultShaderName = "Standard";
        readonly Shader shader;
        readonly Dictionary<byte, Material> materials = new Dictionary<byte, Material>();

        /// <param name="surface">The lit shader of the colour camera; null: Standard, which a
        /// player only has if a scene or the always-included shaders reference it.</param>
        public LabelMaterials(Shader surface)
        {
            shader = surface != null ? surface : Shader.Find(DefaultShaderName);
            if (shader == null)
                throw new InvalidOperationException("no surface shader: assign one to ArsimServer or include '" + DefaultShaderName + "' in the build");
        }

        public Material For(byte label)
        {
            Material material;
            if (!materials.TryGetValue(label, out material))
            {
                material = new Material(shader) { name = "Arsim " + Name(label), color = Colour(label) };
                material.SetFloat("_Glossiness", 0.1f);  // matte, as the CPU renderers shade
                materials[label] = material;
            }
            return material;
        }

        /// <summary>The class colour as a material or clear colour. Labels.Color is linear;
        /// Unity takes colours in sRGB (and linearises them in a linear-space project).</summary>
        public static Color Colour(byte label)
        {
            double r, g, b;
            Labels.Color(label, out r, out g, out b);
            return new Color((float)r, (float)g, (float)b).gamma;
        }

        public static string Name(byte label)
        {
            switch (label)
            {
                case Labels.Road: return "road";
                case Labels.Barrier: return "barrier";
                case Labels.ConeBlue: return "blue cone";
                case Labels.ConeYellow: return "yellow cone";
                case Labels.Ground: return "ground";
                case Labels.Car: return "car";
                case Labels.ConeOrange: return "orange cone";
                case Labels.ConeBigOrange: return "big orange cone";
                case Labels.SceneryStructure: return "scenery structure";
                case Labels.SceneryVegetation: return "scenery vegetation";
                case Labels.SceneryObject: return "scenery object";
                case Labels.Kerb: return "kerb";
                case Labels.None: return "none";
                default: return "class " + label;
            }
        }

        public void Dispose()
        {
            foreach (var material in materials.Values) Object.Destroy(material);
            materials.Clear();
        }
    }
}
