"""The embedded headless backend: speaks protocol v1 like the Unity server, renders on the CPU."""
