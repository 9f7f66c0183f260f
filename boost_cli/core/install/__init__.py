"""Installing found items where agents load them: `plan` (pure decisions), `manifest` (what
boost installed, with digests), `trust` (the hook that may refuse an item), `apply` (I/O)."""
