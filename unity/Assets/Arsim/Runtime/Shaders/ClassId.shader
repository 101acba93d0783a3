// Replacement shader of the semantic camera (SensorCameras): the renderer's class id from
// _ClassId (set per renderer by TrackLabel through a MaterialPropertyBlock; the global
// default is 255, no class), written as id + 1 into a float target cleared to 0, so that
// 0 reads back as "nothing". Both faces are drawn: the protocol fixes no winding.
Shader "Hidden/Arsim/ClassId"
{
    SubShader
    {
        Tags { "RenderType" = "Opaque" }
        Pass
        {
            Cull Off
            ZWrite On
            ZTest LEqual

            CGPROGRAM
            #pragma vertex vert
            #pragma fragment frag
            #include "UnityCG.cginc"

            // Not in a Properties block, so renderers without a property block read the global.
            float _ClassId;

            float4 vert(float4 vertex : POSITION) : SV_POSITION
            {
                return UnityObjectToClipPos(vertex);
            }

            float4 frag() : SV_Target
            {
                return float4(_ClassId + 1.0, 0, 0, 1);
            }
            ENDCG
        }
    }
}
