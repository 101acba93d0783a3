"""QoS profiles, chosen once per kind of topic (as tf2_ros and map_server do)."""

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

# Sensor streams: shallow history, volatile. Reliable rather than best effort, because a reliable
# publisher serves both reliable and best-effort subscribers, so stacks written for the real car
# (SensorDataQoS) and for f1tenth_gym_ros (default QoS) both receive every message.
SENSOR = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=5,
                    reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
# Commands and state: every message matters in lockstep, so keep a deeper queue.
STREAM = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100,
                    reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
CLOCK = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100,
                   reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
# /tf as tf2_ros.TransformBroadcaster, /tf_static as StaticTransformBroadcaster.
TF = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100,
                reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
TF_STATIC = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                       reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.TRANSIENT_LOCAL)
# Maps and track geometry: latched, like map_server.
LATCHED = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                     reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
# What a viewer subscribes with: latched topics latched, deep enough for the latched message of
# every publisher (each sensor node publishes /tf_static); everything else best effort, so a
# viewer that falls behind drops messages instead of holding up a publisher.
VIEWER_LATCHED = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10,
                            reliability=ReliabilityPolicy.RELIABLE,
                            durability=DurabilityPolicy.TRANSIENT_LOCAL)
VIEWER = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10,
                    reliability=ReliabilityPolicy.BEST_EFFORT,
                    durability=DurabilityPolicy.VOLATILE)
