using Arsim.Core;
using UnityEngine;

namespace Arsim.Runtime
{
    /// <summary>The semantic class (Arsim.Core.Labels) that sensors see on this object's collider
    /// and renderer: the LiDAR reads it from the collider it hits, the semantic camera from
    /// the renderer's _ClassId, set here through a MaterialPropertyBlock so that one material
    /// per class serves every piece. Track pieces carry their triangles' class, car proxies
    /// Labels.Car.</summary>
    [DisallowMultipleComponent]
    public sealed class TrackLabel : MonoBehaviour
    {
        public static readonly int ClassIdProperty = Shader.PropertyToID("_ClassId");

        [SerializeField] byte label = Labels.Barrier;

        public byte Label { get { return label; } }

        public static TrackLabel Attach(GameObject target, byte label)
        {
            var component = target.AddComponent<TrackLabel>();
            component.Set(label);
            return component;
        }

        public void Set(byte value)
        {
            label = value;
            Apply();
        }

        void Awake() { Apply(); }

        void Apply()
        {
            var target = GetComponent<Renderer>();
            if (target == null) return;
            var block = new MaterialPropertyBlock();
            target.GetPropertyBlock(block);
            block.SetFloat(ClassIdProperty, label);
            target.SetPropertyBlock(block);
        }
    }
}
