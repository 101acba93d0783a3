"""Recording a simulation into rosbag2 bags (docs/datasets.md), without a ROS install."""
