namespace Arsim.Core
{
    /// <summary>Semantic classes (arsim_core.sensors.labels): the track's per-triangle labels,
    /// the cars' boxes and "nothing"; with the reflectivity and colour the sensors give them.</summary>
    public static class Labels
    {
        public const byte Road = 0, Barrier = 1, ConeBlue = 2, ConeYellow = 3, Ground = 4, Car = 5;
        public const byte ConeOrange = 6, ConeBigOrange = 7;  // Formula Student's small and big orange cones
        // Scenery around a track: walls, buildings, pillars; trees; furniture, fences, poles, signs.
        public const byte SceneryStructure = 8, SceneryVegetation = 9, SceneryObject = 10;
        public const byte Kerb = 11;  // the kerbs at a full-scale circuit's corners (drivable)
        public const byte CalibrationTarget = 12;  // a scenario's calibration board (not a track triangle)
        public const byte None = 255;
        public const double DefaultReflectivity = 0.3;

        /// <summary>Diffuse reflectivity at the LiDAR's wavelength, 0..1 (cones' tape above 1).</summary>
        public static double Reflectivity(byte label)
        {
            switch (label)
            {
                case Road: return 0.12;
                case Barrier: return 0.6;
                case ConeBlue: return 1.5;
                case ConeYellow: return 1.5;
                case ConeOrange: return 1.5;
                case ConeBigOrange: return 1.5;
                case Ground: return 0.25;
                case Car: return 0.5;
                case SceneryStructure: return 0.35;
                case SceneryVegetation: return 0.45;
                case SceneryObject: return 0.5;
                case Kerb: return 0.5;
                case None: return 0.0;
                default: return DefaultReflectivity;
            }
        }

        /// <summary>Camera base colour, linear RGB 0..1, before shading; the sky for None.</summary>
        public static void Color(byte label, out double r, out double g, out double b)
        {
            switch (label)
            {
                case Road: r = 0.33; g = 0.33; b = 0.35; return;
                case Barrier: r = 0.92; g = 0.92; b = 0.92; return;
                case ConeBlue: r = 0.08; g = 0.25; b = 0.85; return;
                case ConeYellow: r = 0.95; g = 0.8; b = 0.08; return;
                case Ground: r = 0.3; g = 0.5; b = 0.22; return;
                case Car: r = 0.75; g = 0.08; b = 0.08; return;
                case ConeOrange:
                case ConeBigOrange: r = 0.95; g = 0.35; b = 0.03; return;
                case SceneryStructure: r = 0.55; g = 0.53; b = 0.5; return;
                case SceneryVegetation: r = 0.1; g = 0.3; b = 0.08; return;
                case SceneryObject: r = 0.45; g = 0.3; b = 0.18; return;
                case Kerb: r = 0.8; g = 0.1; b = 0.08; return;
                case None: r = 0.62; g = 0.76; b = 0.92; return;
                default: r = 0.6; g = 0.6; b = 0.6; return;
            }
        }
    }
}
