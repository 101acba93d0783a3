"""ROS 2 nodes of arsim. Each node stays thin: the work happens in arsim_core."""
