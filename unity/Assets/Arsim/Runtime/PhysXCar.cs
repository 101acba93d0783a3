using Arsim.Core;
using UnityEngine;

namespace Arsim.Runtime
{
    /// <summary>A car on PhysX: a Rigidbody on four WheelColliders (rear-wheel drive, front
    /// steering), driven by a steering angle and a speed or acceleration command, and stepped
    /// by ArsimServer's Physics.Simulate (physics runs by script). It is a per-car dynamics
    /// choice on the Unity side, for engine-side experiments: protocol v1 sends the bridge's
    /// poses, not commands, and returns no car states, so the bridge cannot drive it yet.
    /// The transform is base_link: the middle of the rear axle, on the ground. Wheels not
    /// assigned in the inspector are made in Awake from the geometry below (F1TENTH-sized).</summary>
    [RequireComponent(typeof(Rigidbody))]
    public sealed class PhysXCar : MonoBehaviour
    {
        [Header("Geometry and mass")]
        [SerializeField, Min(0.05f)] float wheelbase = 0.33f;
        [SerializeField, Min(0.05f)] float trackWidth = 0.27f;
        [SerializeField, Min(0.01f)] float wheelRadius = 0.05f;
        [SerializeField, Min(0.1f)] float mass = 3.5f;
        [SerializeField, Min(0.001f)] float suspensionTravel = 0.02f;

        [Header("Limits")]
        [SerializeField] float maxSteering = 0.42f;        // rad
        [SerializeField] float maxAcceleration = 9.5f;     // m/s^2
        [SerializeField] float maxBraking = 10f;           // m/s^2
        [SerializeField] float speedGain = 4f;             // 1/s: acceleration per m/s of speed error

        [Header("Wheels (made if empty)")]
        [SerializeField] WheelCollider frontLeft;
        [SerializeField] WheelCollider frontRight;
        [SerializeField] WheelCollider rearLeft;
        [SerializeField] WheelCollider rearRight;

        Rigidbody body;
        WheelCollider[] wheels;
        float steering, targetSpeed, acceleration;
        bool bySpeed = true;

        /// <summary>REP-103 pose of base_link in the world.</summary>
        public Pose6 Pose { get { return UnityAxes.ToPose(transform.position, transform.rotation); } }

        /// <summary>Forward speed [m/s], negative when reversing.</summary>
        public float Speed { get { return Vector3.Dot(body.velocity, transform.forward); } }

        /// <summary>Steer (rad, REP-103: positive turns left) and track a speed [m/s].</summary>
        public void DriveAtSpeed(float steeringAngle, float speed)
        {
            steering = steeringAngle;
            targetSpeed = speed;
            bySpeed = true;
        }

        /// <summary>Steer (rad, positive left) and accelerate [m/s^2] along the car's x axis.</summary>
        public void DriveWithAcceleration(float steeringAngle, float longitudinalAcceleration)
        {
            steering = steeringAngle;
            acceleration = longitudinalAcceleration;
            bySpeed = false;
        }

        void Awake()
        {
            body = GetComponent<Rigidbody>();
            body.mass = mass;
            body.centerOfMass = new Vector3(0f, wheelRadius, wheelbase / 2f);  // low, between the axles
            if (GetComponent<BoxCollider>() == null)
            {
                // A chassis above the wheels, so the car stops at barriers and other cars.
                var chassis = gameObject.AddComponent<BoxCollider>();
                chassis.center = new Vector3(0f, 2f * wheelRadius, wheelbase / 2f);
                chassis.size = new Vector3(trackWidth, wheelRadius, wheelbase + 2f * wheelRadius);
            }
            float half = trackWidth / 2f;
            if (frontLeft == null) frontLeft = MakeWheel("front left", -half, wheelbase);
            if (frontRight == null) frontRight = MakeWheel("front right", half, wheelbase);
            if (rearLeft == null) rearLeft = MakeWheel("rear left", -half, 0f);
            if (rearRight == null) rearRight = MakeWheel("rear right", half, 0f);
            wheels = new[] { frontLeft, frontRight, rearLeft, rearRight };
        }

        /// <summary>Applies the command for the coming physics step (ArsimServer steps after
        /// every other Update).</summary>
        void Update()
        {
            var speed = Speed;
            var wanted = bySpeed ? speedGain * (targetSpeed - speed) : acceleration;
            wanted = Mathf.Clamp(wanted, -maxBraking, maxAcceleration);
            // Against the motion it is braking on all four wheels; otherwise the rear wheels drive.
            var braking = Mathf.Abs(speed) > 0.05f && wanted * speed < 0f;
            var drive = braking ? 0f : body.mass * wanted * wheelRadius / 2f;
            var brake = braking ? body.mass * Mathf.Abs(wanted) * wheelRadius / 4f : 0f;
            rearLeft.motorTorque = rearRight.motorTorque = drive;
            foreach (var wheel in wheels) wheel.brakeTorque = brake;
            // Unity's steerAngle turns clockwise seen from above (to the right): the opposite of REP-103.
            var angle = -Mathf.Clamp(steering, -maxSteering, maxSteering) * Mathf.Rad2Deg;
            frontLeft.steerAngle = frontRight.steerAngle = angle;
        }

        WheelCollider MakeWheel(string wheelName, float x, float z)
        {
            var holder = new GameObject(wheelName);
            holder.transform.SetParent(transform, false);
            holder.transform.localPosition = new Vector3(x, wheelRadius + suspensionTravel / 2f, z);
            var wheel = holder.AddComponent<WheelCollider>();
            wheel.radius = wheelRadius;
            wheel.mass = 0.05f * mass;
            wheel.suspensionDistance = suspensionTravel;
            // Springs that hold a quarter of the car at mid travel, damped at 0.7 of critical.
            var stiffness = mass * Physics.gravity.magnitude / 4f / (suspensionTravel / 2f);
            wheel.suspensionSpring = new JointSpring
            {
                spring = stiffness,
                damper = 2f * 0.7f * Mathf.Sqrt(stiffness * mass / 4f),
                targetPosition = 0.5f,
            };
            return wheel;
        }
    }
}
