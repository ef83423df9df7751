/* jinja_script.h - the Jinja2 helper's Python source (worker/tools/jinja_helper.py), which the build turns into jinja_script.c. */
#ifndef SLUICE_JINJA_SCRIPT_H
#define SLUICE_JINJA_SCRIPT_H

/* The whole script, NUL-terminated; static storage (not const: it goes in an argv). */
extern char	 jinja_script[];

#endif
