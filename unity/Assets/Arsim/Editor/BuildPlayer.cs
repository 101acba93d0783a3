using System;
using Arsim.Runtime;
using UnityEditor;
using UnityEditor.Build.Reporting;
using UnityEditor.SceneManagement;
using UnityEngine;

namespace Arsim.Editor
{
    /// <summary>Builds the Linux server player from the command line:
    /// <c>Unity -batchmode -quit -projectPath unity -executeMethod Arsim.Editor.BuildPlayer.BuildLinux
    /// [-buildOutput Build/arsim-unity-server]</c>. A scene is YAML that only Unity writes, so the
    /// one scene (Assets/Arsim/Scenes/Server.unity) is made here when missing: the server, a
    /// sun, a main camera and the manual-driving car. In batch mode a failure exits with 1.</summary>
    public static class BuildPlayer
    {
        public const string ScenePath = "Assets/Arsim/Scenes/Server.unity";
        const string DefaultOutput = "Build/arsim-unity-server";

        [MenuItem("Arsim/Build Linux Server Player")]
        public static void BuildLinux()
        {
            try
            {
                var output = Argument("-buildOutput") ?? DefaultOutput;
                EnsureServerScene();
                ConfigurePlayer();
                var report = BuildPipeline.BuildPlayer(new BuildPlayerOptions
                {
                    scenes = new[] { ScenePath },
                    locationPathName = output,
                    target = BuildTarget.StandaloneLinux64,
                    targetGroup = BuildTargetGroup.Standalone,
                    options = BuildOptions.None,
                });
                var summary = report.summary;
                if (summary.result != BuildResult.Succeeded)
                    throw new InvalidOperationException("the build " + summary.result + " with " + summary.totalErrors + " error(s)");
                Debug.Log("[arsim] built " + summary.outputPath + " (" + summary.totalSize / (1024 * 1024) + " MiB)");
            }
            catch (Exception error)
            {
                Debug.LogError("[arsim] player build failed: " + error.Message);
                if (Application.isBatchMode) EditorApplication.Exit(1);
            }
        }

        /// <summary>Makes Assets/Arsim/Scenes/Server.unity unless it exists.</summary>
        [MenuItem("Arsim/Create Server Scene")]
        public static void EnsureServerScene()
        {
            if (AssetDatabase.LoadAssetAtPath<SceneAsset>(ScenePath) != null) return;
            if (!Application.isBatchMode && !EditorSceneManager.SaveCurrentModifiedScenesIfUserWantsTo())
                throw new OperationCanceledException("the open scene has unsaved changes");
            if (!AssetDatabase.IsValidFolder("Assets/Arsim/Scenes")) AssetDatabase.CreateFolder("Assets/Arsim", "Scenes");
            var scene = EditorSceneManager.NewScene(NewSceneSetup.EmptyScene, NewSceneMode.Single);

            var sun = new GameObject("Sun").AddComponent<Light>();
            sun.type = LightType.Directional;
            sun.shadows = LightShadows.Soft;
            sun.transform.rotation = Quaternion.Euler(50f, -30f, 0f);

            var camera = new GameObject("Main Camera").AddComponent<Camera>();
            camera.tag = "MainCamera";
            camera.transform.position = new Vector3(0f, 2f, -4f);

            var server = new GameObject("Arsim Server").AddComponent<ArsimServer>();
            // Referenced from the scene, so that the player build includes the shaders.
            var fields = new SerializedObject(server);
            SetShader(fields, "surfaceShader", "Standard");
            SetShader(fields, "depthShader", SensorCameras.DepthShaderName);
            SetShader(fields, "classIdShader", SensorCameras.ClassIdShaderName);
            fields.ApplyModifiedPropertiesWithoutUndo();

            new GameObject("Manual Car").AddComponent<ManualDriving>();

            if (!EditorSceneManager.SaveScene(scene, ScenePath))
                throw new InvalidOperationException("could not save " + ScenePath);
            Debug.Log("[arsim] created " + ScenePath);
        }

        static void SetShader(SerializedObject fields, string field, string shaderName)
        {
            var shader = Shader.Find(shaderName);
            if (shader == null) throw new InvalidOperationException("shader '" + shaderName + "' not found");
            var property = fields.FindProperty(field);
            if (property == null) throw new InvalidOperationException("ArsimServer has no field '" + field + "'");
            property.objectReferenceValue = shader;
        }

        /// <summary>What a server player needs: it keeps serving without focus, in a window,
        /// with linear lighting (the cameras' sRGB targets then hold rgb8 as sent).</summary>
        static void ConfigurePlayer()
        {
            PlayerSettings.runInBackground = true;
            PlayerSettings.colorSpace = ColorSpace.Linear;
            PlayerSettings.fullScreenMode = FullScreenMode.Windowed;
            PlayerSettings.defaultScreenWidth = 960;
            PlayerSettings.defaultScreenHeight = 540;
            PlayerSettings.resizableWindow = true;
        }

        /// <summary>The value after a command-line flag, or null.</summary>
        static string Argument(string flag)
        {
            var args = Environment.GetCommandLineArgs();
            for (var i = 0; i < args.Length - 1; i++)
                if (args[i] == flag) return args[i + 1];
            return null;
        }
    }
}
