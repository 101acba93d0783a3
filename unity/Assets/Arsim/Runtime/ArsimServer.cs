using System;
using System.Globalization;
using Arsim.Core;
using UnityEngine;

namespace Arsim.Runtime
{
    /// <summary>The Unity server: binds protocol v1's REP socket and answers the bridge with
    /// Arsim.Core's BackendService over a UnityRenderer. The socket's threads only receive;
    /// every request is handled and answered on the main thread (Update), since Unity's API
    /// is main-thread only. Once a bridge has sent InitialSettings it owns time: Unity's clock
    /// (Time.captureDeltaTime, set to the frame period) and the PhysX steps (physics runs by
    /// script) advance by the simulation time the bridge's requests advanced, not by the wall.
    /// Command line (a player's, as the launcher starts it): --address tcp://127.0.0.1:5555,
    /// --allow-remote, --max-request-mib 128; absent ones keep the inspector's values.</summary>
    [DefaultExecutionOrder(1000)]  // after the scripts that set up a frame (PhysX car commands)
    public sealed class ArsimServer : MonoBehaviour
    {
        const int MaxRequestsPerFrame = 64;  // a frame always ends, however busy the peers

        [SerializeField] string address = "tcp://127.0.0.1:5555";
        [SerializeField] bool allowRemote;
        [SerializeField, Min(1)] int maxRequestMib = 128;
        [Tooltip("How long an idle frame waits for a request, so an idle server does not spin.")]
        [SerializeField, Range(0, 50)] int idleWaitMs = 2;
        [Tooltip("The longest PhysX step; a longer frame is simulated in equal substeps.")]
        [SerializeField, Min(0.0005f)] float maxPhysicsStep = 0.005f;
        [Header("Shaders (referenced here so that player builds include them)")]
        [SerializeField] Shader surfaceShader = null;  // null: Standard
        [SerializeField] Shader depthShader = null;    // null: found by name (editor)
        [SerializeField] Shader classIdShader = null;  // null: found by name (editor)

        readonly BridgeClock clock = new BridgeClock();
        ZmtpRepServer server;
        BackendService service;
        UnityRenderer unityRenderer;
        InitialSettingsMessage appliedSettings;
        SimulationMode previousSimulationMode;

        /// <summary>Whether a bridge has sent InitialSettings: from then on it owns the cars
        /// (ManualDriving steps aside).</summary>
        public bool BridgeConnected { get { return appliedSettings != null; } }

        void Awake()
        {
            previousSimulationMode = Physics.simulationMode;
            Physics.simulationMode = SimulationMode.Script;
            Application.runInBackground = true;  // a player without focus keeps serving
            Application.targetFrameRate = -1;    // as fast as the bridge steps
            QualitySettings.vSyncCount = 0;
            string problem;
            if (!ReadCommandLine(Environment.GetCommandLineArgs(), out problem))
            {
                Fail(problem);
                return;
            }
            try
            {
                unityRenderer = new UnityRenderer(surfaceShader, depthShader, classIdShader);
                service = new BackendService(unityRenderer);
                service.Log += line => Debug.Log("[arsim] " + line);
                server = new ZmtpRepServer(address, allowRemote, (long)maxRequestMib << 20);
                server.Start();
            }
            catch (Exception error)  // a malformed address (ArgumentException), a busy port, no shader
            {
                Shutdown();
                Fail("cannot serve at " + address + ": " + error.Message);
                return;
            }
            Debug.Log("[arsim] Unity server serving protocol v" + Protocol.Version + " at " + address);
        }

        void Update()
        {
            if (server == null) return;
            Serve();
            if (BridgeConnected) FollowBridge();
            else StepPhysics(Time.deltaTime);  // no bridge yet: real time, for play in the editor
        }

        /// <summary>Answers the requests waiting now, each completely before the next.</summary>
        void Serve()
        {
            var wait = idleWaitMs;
            ZmtpRequest request;
            for (var i = 0; i < MaxRequestsPerFrame && server.TryTake(out request, wait); i++)
            {
                var reply = service.Handle(request.Frames);
                request.Reply(reply);
                clock.Observe(reply);
                NoteSettings();
                wait = 0;
            }
        }

        /// <summary>A new InitialSettings: the bridge now owns the cars and time, one frame
        /// period per step.</summary>
        void NoteSettings()
        {
            var settings = service.Settings;
            if (settings == null || ReferenceEquals(settings, appliedSettings)) return;
            appliedSettings = settings;
            if (settings.FramePeriodNs > 0) Time.captureDeltaTime = (float)(settings.FramePeriodNs * 1e-9);
        }

        /// <summary>PhysX steps by the simulation time served this frame, and the next frame
        /// lasts as long in Unity's clock; a frame that served no step stands still.</summary>
        void FollowBridge()
        {
            var advance = (float)clock.TakeAdvance();
            StepPhysics(advance);
            if (advance > 0f)
            {
                Time.captureDeltaTime = advance;
                Time.timeScale = 1f;
            }
            else
            {
                Time.timeScale = 0f;
            }
        }

        void StepPhysics(float seconds)
        {
            if (seconds <= 0f) return;
            var steps = Mathf.CeilToInt(seconds / maxPhysicsStep);
            for (var i = 0; i < steps; i++) Physics.Simulate(seconds / steps);
        }

        bool ReadCommandLine(string[] args, out string problem)
        {
            problem = null;
            for (var i = 1; i < args.Length; i++)  // args[0] is the program; Unity's own flags are skipped
            {
                switch (args[i])
                {
                    case "--address":
                        if (++i >= args.Length) { problem = "--address needs a value"; return false; }
                        address = args[i];
                        break;
                    case "--allow-remote":
                        allowRemote = true;
                        break;
                    case "--max-request-mib":
                        int mib;
                        if (++i >= args.Length || !int.TryParse(args[i], NumberStyles.None, CultureInfo.InvariantCulture, out mib)
                            || mib < 1 || mib > 1 << 20)
                        {
                            problem = "--max-request-mib needs a whole number of MiB from 1 to 1048576";
                            return false;
                        }
                        maxRequestMib = mib;
                        break;
                }
            }
            return true;
        }

        /// <summary>A player that cannot serve exits non-zero, so the launcher reports it; the
        /// editor logs and disables the server.</summary>
        void Fail(string problem)
        {
            Debug.LogError("[arsim] " + problem);
            enabled = false;
            if (!Application.isEditor) Application.Quit(2);
        }

        void OnApplicationQuit() { Shutdown(); }

        /// <summary>Also gives back the project-wide settings changed here, which would
        /// otherwise outlive Play mode in the editor.</summary>
        void OnDestroy()
        {
            Shutdown();
            Physics.simulationMode = previousSimulationMode;
            Time.captureDeltaTime = 0f;
            Time.timeScale = 1f;
        }

        void Shutdown()
        {
            if (server != null)
            {
                server.Dispose();
                server = null;
            }
            if (unityRenderer != null)
            {
                unityRenderer.Dispose();
                unityRenderer = null;
            }
        }
    }
}
