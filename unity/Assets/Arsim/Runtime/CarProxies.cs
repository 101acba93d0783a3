using System;
using System.Collections.Generic;
using Arsim.Core;
using UnityEngine;
using Object = UnityEngine.Object;

namespace Arsim.Runtime
{
    /// <summary>The cars as other cars' sensors see them: a box collider and cube per visible car
    /// (class car), placed at every SetCars: each Update, and again per column group of a
    /// spinning LiDAR, which sees the cars where they were when its columns were measured.
    /// Proxies are pooled by car id; a car missing from the list is deactivated.</summary>
    public sealed class CarProxies : IDisposable
    {
        readonly Transform parent;
        readonly Material material;
        readonly Dictionary<string, GameObject> proxies = new Dictionary<string, GameObject>();
        readonly HashSet<string> placed = new HashSet<string>();

        public CarProxies(Transform parent, LabelMaterials materials)
        {
            this.parent = parent;
            material = materials.For(Labels.Car);
        }

        public void Place(IReadOnlyList<CarBox> boxes)
        {
            placed.Clear();
            foreach (var box in boxes)
            {
                var proxy = ProxyFor(box.Car);
                // The box stands on the pose: length and width centred on base_link, from the
                // pose's z up to its height.
                var rotation = UnityAxes.Orientation(box.Pose);
                var centre = UnityAxes.Position(box.Pose) + rotation * Vector3.up * (float)(box.Height / 2);
                proxy.transform.SetPositionAndRotation(centre, rotation);
                proxy.transform.localScale = new Vector3((float)box.Width, (float)box.Height, (float)box.Length);
                proxy.SetActive(true);
                placed.Add(box.Car);
            }
            foreach (var pair in proxies)
                if (!placed.Contains(pair.Key)) pair.Value.SetActive(false);
        }

        /// <summary>Hides a car's proxy until the returned scope is disposed: a sensor never
        /// sees its own car. Null or an absent car hides nothing.</summary>
        public HiddenCar Without(string car)
        {
            GameObject proxy;
            if (car == null || !proxies.TryGetValue(car, out proxy) || !proxy.activeSelf) return default(HiddenCar);
            proxy.SetActive(false);
            return new HiddenCar(proxy);
        }

        GameObject ProxyFor(string car)
        {
            GameObject proxy;
            if (proxies.TryGetValue(car, out proxy)) return proxy;
            proxy = GameObject.CreatePrimitive(PrimitiveType.Cube);  // a unit cube with a BoxCollider
            proxy.name = "Car " + car;
            proxy.transform.SetParent(parent, false);
            proxy.GetComponent<MeshRenderer>().sharedMaterial = material;
            TrackLabel.Attach(proxy, Labels.Car);
            proxies[car] = proxy;
            return proxy;
        }

        public void Dispose()
        {
            foreach (var proxy in proxies.Values) Object.Destroy(proxy);
            proxies.Clear();
        }

        public struct HiddenCar : IDisposable
        {
            readonly GameObject proxy;

            public HiddenCar(GameObject proxy) { this.proxy = proxy; }

            public void Dispose()
            {
                if (proxy != null) proxy.SetActive(true);
            }
        }
    }
}
