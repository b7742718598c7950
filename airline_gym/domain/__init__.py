"""The pure airline domain: database, tools, tasks and grading (no gymnasium, no LLMs)."""

from airline_gym.domain.database import AirlineDB, PristineDB, db_hash, load_pristine, same_db
from airline_gym.domain.grading import Grade, gold_db, grade
from airline_gym.domain.schemas import tool_schemas
from airline_gym.domain.tasks import Task, TaskSet, load_task_set
from airline_gym.domain.toolbox import ToolResult, execute

__all__ = [
    "AirlineDB",
    "Grade",
    "PristineDB",
    "Task",
    "TaskSet",
    "ToolResult",
    "db_hash",
    "execute",
    "gold_db",
    "grade",
    "load_pristine",
    "load_task_set",
    "same_db",
    "tool_schemas",
]
