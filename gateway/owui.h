/* owui.h - interceptOpenWebUIToolRequests: Open WebUI's tool-choosing request, answered at once (addendum A8.8). */
#ifndef SLUICE_OWUI_H
#define SLUICE_OWUI_H

#include <stdbool.h>

struct api_body;

/* Is the parsed chat body Open WebUI asking which tool to use: a
 * message with role "system" whose string content holds the sentence
 * of Open WebUI's tool-selection prompt? Only the two chat APIs
 * (API_OPENAI_CHAT, API_OLLAMA_CHAT) ever are. */
bool	owui_tool_request(int api, const struct api_body *);

#endif
