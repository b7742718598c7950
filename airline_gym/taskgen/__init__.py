"""Training tasks that are not the test set: sample intents from the DB, decide them with the
policy solver, and write tasks in tau2's format (pure: no gymnasium, no litellm)."""
