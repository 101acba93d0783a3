"""Configuration: simulation settings, car profiles and topic maps, loaded once into frozen
dataclasses. Every error names the file and the key path."""
