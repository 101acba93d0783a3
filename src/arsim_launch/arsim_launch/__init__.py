"""Launch generation for arsim: settings + topic map -> node list, used by every launcher."""
