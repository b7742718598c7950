"""Bridges from the text env to training libraries that need array spaces.

Nothing heavy is imported here: ``airline_gym.integrations.sb3`` holds the candidate-action
wrapper (Gymnasium and NumPy only) and imports stable-baselines3/torch only inside the helpers
that train or evaluate.
"""
