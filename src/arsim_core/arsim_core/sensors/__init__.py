"""Sensor models shared by the backend and the ROS republishers, without any ROS import:
semantic classes, LiDAR beam geometry, pinhole intrinsics, the point-cloud layout, geodesy and
the IMU and wheel-odometry kinematics."""
