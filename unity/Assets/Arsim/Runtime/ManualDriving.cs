using UnityEngine;

namespace Arsim.Runtime
{
    /// <summary>AR-Sim's manual-driving mode: drive a car yourself in the editor (or a player)
    /// with no bridge. Keyboard (WASD or the arrows) and gamepad both come through the input
    /// manager's Horizontal and Vertical axes, so no Input System package is needed; R puts
    /// the car back where it started. The car follows a kinematic bicycle model about its rear
    /// axle, on a flat ground of its own, watched by a chase camera, with speed and steering
    /// on screen. Once a bridge has sent InitialSettings it owns the cars: this car and its
    /// ground leave the scene, so no sensor sees them.</summary>
    public sealed class ManualDriving : MonoBehaviour
    {
        [Header("Car (F1TENTH-sized)")]
        [SerializeField, Min(0.05f)] float wheelbase = 0.33f;
        [SerializeField] Vector3 bodySize = new Vector3(0.3f, 0.15f, 0.5f);  // width, height, length
        [SerializeField] float maxSteering = 0.42f;        // rad
        [SerializeField] float steeringRate = 3.2f;        // rad/s
        [SerializeField] float maxSpeed = 8f;              // m/s
        [SerializeField] float maxReverseSpeed = 2f;       // m/s
        [SerializeField] float acceleration = 7.5f;        // m/s^2
        [SerializeField] float braking = 9f;               // m/s^2
        [SerializeField] float coasting = 1f;              // m/s^2, with no pedal

        [Header("Chase camera (the main camera, or one made here)")]
        [SerializeField] Camera chaseCamera;
        [SerializeField] float chaseDistance = 1.5f;
        [SerializeField] float chaseHeight = 0.6f;
        [SerializeField] float chaseSharpness = 5f;        // 1/s

        [SerializeField, Tooltip("Found in the scene if empty.")] ArsimServer server;

        Vector3 startPosition;
        Quaternion startRotation;
        float speed, steering;
        GameObject ground;

        void Start()
        {
            if (server == null) server = FindObjectOfType<ArsimServer>();
            if (chaseCamera == null) chaseCamera = Camera.main;
            if (chaseCamera == null) chaseCamera = new GameObject("Chase Camera").AddComponent<Camera>();
            startPosition = transform.position;
            startRotation = transform.rotation;
            MakeBody();
            MakeGround();
        }

        void Update()
        {
            if (server != null && server.BridgeConnected)
            {
                StepAside();
                return;
            }
            if (Input.GetKeyDown(KeyCode.R)) Restart();
            var dt = Time.deltaTime;
            speed = Pedal(speed, Input.GetAxis("Vertical"), dt);
            // Horizontal is positive to the right; steering is positive to the left (REP-103).
            var wanted = -Input.GetAxis("Horizontal") * maxSteering;
            steering = Mathf.MoveTowards(steering, wanted, steeringRate * dt);
            // Kinematic bicycle about the rear axle: Unity's yaw turns clockwise, hence the minus.
            var yawRate = speed / wheelbase * Mathf.Tan(steering);
            transform.Rotate(0f, -yawRate * dt * Mathf.Rad2Deg, 0f, Space.World);
            transform.position += transform.forward * (speed * dt);
        }

        void LateUpdate()
        {
            if (chaseCamera == null) return;
            var target = transform.position - transform.forward * chaseDistance + Vector3.up * chaseHeight;
            var blend = 1f - Mathf.Exp(-chaseSharpness * Time.deltaTime);
            chaseCamera.transform.position = Vector3.Lerp(chaseCamera.transform.position, target, blend);
            chaseCamera.transform.LookAt(transform.position + transform.forward * wheelbase);
        }

        void OnGUI()
        {
            GUI.Box(new Rect(10, 10, 280, 92), "Manual driving");
            GUI.Label(new Rect(20, 34, 260, 20), string.Format("speed     {0,6:F2} m/s  ({1:F0} km/h)", speed, speed * 3.6f));
            GUI.Label(new Rect(20, 54, 260, 20), string.Format("steering  {0,6:F1} deg", steering * Mathf.Rad2Deg));
            GUI.Label(new Rect(20, 74, 260, 20), "WASD, arrows or gamepad; R: restart");
        }

        /// <summary>Throttle forward, brake to a stop, then reverse; coast with no pedal.</summary>
        float Pedal(float current, float pedal, float dt)
        {
            if (Mathf.Abs(pedal) < 0.05f) return Mathf.MoveTowards(current, 0f, coasting * dt);
            var stopping = current * pedal < 0f;
            var next = current + pedal * (stopping ? braking : acceleration) * dt;
            if (stopping && next * current < 0f) next = 0f;  // a brake stops; the next press reverses
            return Mathf.Clamp(next, -maxReverseSpeed, maxSpeed);
        }

        void Restart()
        {
            transform.SetPositionAndRotation(startPosition, startRotation);
            speed = steering = 0f;
        }

        void MakeBody()
        {
            var body = GameObject.CreatePrimitive(PrimitiveType.Cube);
            body.name = "Body";
            Destroy(body.GetComponent<Collider>());  // a picture only: sensors and physics ignore it
            body.transform.SetParent(transform, false);
            body.transform.localPosition = new Vector3(0f, bodySize.y / 2f + 0.03f, wheelbase / 2f);
            body.transform.localScale = bodySize;
        }

        void MakeGround()
        {
            ground = GameObject.CreatePrimitive(PrimitiveType.Plane);  // 10 m square, scaled to 400 m
            ground.name = "Manual Driving Ground";
            Destroy(ground.GetComponent<Collider>());
            ground.transform.position = new Vector3(startPosition.x, startPosition.y - 0.001f, startPosition.z);
            ground.transform.localScale = new Vector3(40f, 1f, 40f);
            ground.GetComponent<Renderer>().material.color = new Color(0.45f, 0.55f, 0.4f);
        }

        void StepAside()
        {
            if (ground != null) Destroy(ground);
            gameObject.SetActive(false);
        }
    }
}
