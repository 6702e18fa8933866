"""The Python front end: a libcst syntax adapter on the front-end core."""
