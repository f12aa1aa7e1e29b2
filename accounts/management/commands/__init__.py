"""createauditor."""
