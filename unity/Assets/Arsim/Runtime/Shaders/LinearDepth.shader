// Replacement shader of the depth camera (SensorCameras): each fragment's linear eye depth,
// the distance along the optical axis in metres, into a float target. Both faces are drawn:
// the protocol fixes no winding.
Shader "Hidden/Arsim/LinearDepth"
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

            struct v2f
            {
                float4 pos : SV_POSITION;
                float depth : TEXCOORD0;
            };

            v2f vert(appdata_base v)
            {
                v2f o;
                o.pos = UnityObjectToClipPos(v.vertex);
                // View-space z is affine in the triangle, so its interpolation is exact.
                COMPUTE_EYEDEPTH(o.depth);
                return o;
            }

            float4 frag(v2f i) : SV_Target
            {
                return float4(i.depth, 0, 0, 1);
            }
            ENDCG
        }
    }
}
