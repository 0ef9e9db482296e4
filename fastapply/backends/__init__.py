"""Model backends behind one narrow interface (see `base.Backend`)."""
