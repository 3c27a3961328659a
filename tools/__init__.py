"""What a user runs on their own runs, and the helpers every command shares: see README.md beside this file."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the project's folder
