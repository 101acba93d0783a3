using System.Collections.Generic;
using Arsim.Core;
using UnityEngine;
using UnityEngine.Rendering;

namespace Arsim.Runtime
{
    /// <summary>The track of InitialSettings and Track as GameObjects: one per class present,
    /// each with a two-sided render mesh (the protocol fixes no winding, and the axis change
    /// to Unity mirrors it anyway), a one-sided MeshCollider for the LiDAR (which casts with
    /// hitBackfaces), the class's material and a TrackLabel.</summary>
    public sealed class TrackBuilder
    {
        readonly Transform parent;
        readonly LabelMaterials materials;
        readonly List<Mesh> meshes = new List<Mesh>();
        GameObject root;

        public TrackBuilder(Transform parent, LabelMaterials materials)
        {
            this.parent = parent;
            this.materials = materials;
        }

        public void Build(TrackMesh track)
        {
            Clear();
            root = new GameObject("Track " + track.Name);
            root.transform.SetParent(parent, false);
            var byLabel = new SortedDictionary<byte, List<int>>();
            var count = track.Triangles.Length / 3;
            for (var t = 0; t < count; t++)
            {
                var label = t < track.Labels.Length ? track.Labels[t] : Labels.Barrier;
                List<int> members;
                if (!byLabel.TryGetValue(label, out members)) byLabel[label] = members = new List<int>();
                members.Add(t);
            }
            foreach (var group in byLabel) AddPiece(track, group.Key, group.Value);
        }

        /// <summary>Removes the current track. It is deactivated at once, so the casts of this
        /// frame no longer see it, and destroyed at the end of the frame.</summary>
        public void Clear()
        {
            if (root != null)
            {
                root.SetActive(false);
                Object.Destroy(root);
                root = null;
            }
            foreach (var mesh in meshes) Object.Destroy(mesh);
            meshes.Clear();
        }

        void AddPiece(TrackMesh track, byte label, List<int> triangles)
        {
            // The piece's own vertices, in Unity axes, and its triangles indexing them.
            var remap = new Dictionary<uint, int>();
            var vertices = new List<Vector3>();
            var indices = new int[3 * triangles.Count];
            for (var i = 0; i < triangles.Count; i++)
            {
                for (var corner = 0; corner < 3; corner++)
                {
                    var vertex = track.Triangles[3 * triangles[i] + corner];
                    int index;
                    if (!remap.TryGetValue(vertex, out index))
                    {
                        index = vertices.Count;
                        remap[vertex] = index;
                        vertices.Add(UnityAxes.Point(track.Vertices, 3 * (int)vertex));
                    }
                    indices[3 * i + corner] = index;
                }
            }
            var piece = new GameObject(LabelMaterials.Name(label));
            piece.transform.SetParent(root.transform, false);
            piece.AddComponent<MeshFilter>().sharedMesh = TwoSided(piece.name, vertices, indices);
            piece.AddComponent<MeshRenderer>().sharedMaterial = materials.For(label);
            piece.AddComponent<MeshCollider>().sharedMesh = NewMesh(piece.name + " collider", vertices, indices);
            TrackLabel.Attach(piece, label);
        }

        /// <summary>Each triangle twice, the copy reversed on its own vertices, so that
        /// RecalculateNormals gives both faces outward normals.</summary>
        Mesh TwoSided(string name, List<Vector3> vertices, int[] indices)
        {
            var n = vertices.Count;
            var doubled = new List<Vector3>(2 * n);
            doubled.AddRange(vertices);
            doubled.AddRange(vertices);
            var both = new int[2 * indices.Length];
            indices.CopyTo(both, 0);
            for (var i = 0; i < indices.Length; i += 3)
            {
                both[indices.Length + i] = indices[i] + n;
                both[indices.Length + i + 1] = indices[i + 2] + n;
                both[indices.Length + i + 2] = indices[i + 1] + n;
            }
            return NewMesh(name, doubled, both);
        }

        Mesh NewMesh(string name, List<Vector3> vertices, int[] indices)
        {
            // 32-bit indices: a track easily has more than 65,535 vertices.
            var mesh = new Mesh { name = name, indexFormat = IndexFormat.UInt32 };
            mesh.SetVertices(vertices);
            mesh.SetTriangles(indices, 0);
            mesh.RecalculateNormals();
            mesh.RecalculateBounds();
            meshes.Add(mesh);
            return mesh;
        }
    }
}
