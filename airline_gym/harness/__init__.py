"""Running episodes at scale: the episode runner, evaluation, results files, export and regrade."""
