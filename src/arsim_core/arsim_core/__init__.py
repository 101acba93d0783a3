"""ROS-free core of arsim: configuration, dynamics, tracks, protocol and embedded backend."""
