/* confcheck.h - --check-config: load what a user can reach and report problems and warnings. */
#ifndef SLUICE_CONFCHECK_H
#define SLUICE_CONFCHECK_H

#include <stdbool.h>

struct gw_conf;

/* Load everything the user can reach: the user file and its
 * chatPromptTemplateName; its customWorkflow, or its routing config with
 * the categoriser, each category's workflow and _DefaultWorkflow; every
 * shared workflow; recursively every workflow a CustomWorkflow or
 * ConditionalCustomWorkflow node names (a cycle is a problem); for each
 * node naming an endpoint, that endpoint, its api type, its prompt
 * template (completion api types), the node's preset, and each
 * backupEndpointName after it with its preset (a cycle is a problem).
 * An endpointName or preset with {variables} is resolved from what the
 * configuration fixes (workflow keys, {agentNInput} from the caller's
 * scoped_variables, recursively); workflow names with them are
 * skipped. Node types Sluice does not run, unknown node types,
 * a missing _DefaultWorkflow beside a routing config,
 * a user that selects no workflow, names that cannot be resolved, and
 * problems in shared workflows of a user who does not list them
 * (allowSharedWorkflows false) are warnings. So are keys, in every file
 * reached (the memory and ContextCompactor settings files, MCP server
 * files and Users/_current-user.json too), that Sluice does not
 * implement or WilmerAI does not know (confcheck_keys.c).
 * Each problem and warning goes to report as "path:line:col: message"
 * (without "warning: "; warning says which it is). report NULL: printed
 * to stderr, warnings after "warning: ", then a summary line
 * ("configuration OK (N files checked for user 'U'[, W warnings])").
 * Returns 0 when there is no problem (warnings or not), EX_CONFIG
 * otherwise. */
int	confcheck_run(const struct gw_conf *,
	    void (*report)(const char *line, bool warning));

/* Check the keys of one file, confdir/rel, as --check-config does for
 * the files a user reaches, its kind told by its folder (rel starts
 * "Users/", "Endpoints/", "ApiTypes/", "PromptTemplates/", "Routing/",
 * "Workflows/" (an object without "nodes" there is a memory or
 * ContextCompactor settings file) or "MCPServers/"; other folders,
 * Presets/ among them, hold nothing to check). A workflow's node types
 * Sluice does not run are reported too. Each warning goes to report.
 * Returns the number of warnings, or -1 when the file cannot be read
 * or parsed (reported as a problem). */
int	confcheck_file(const char *confdir, const char *rel,
	    void (*report)(const char *line, bool warning));

#endif
