/* route.h - the HTTP surface: routes, authentication, health, and the model routes (bodies in models.c). */
#ifndef SLUICE_ROUTE_H
#define SLUICE_ROUTE_H

#include "http.h"

/* The http_handler of the gateway; arg is the struct gw. */
void	route_request(struct http_conn *, const struct http_request *,
	    void *arg);

/* The http_error_fmt of the gateway: Ollama-shaped under /api/,
 * OpenAI-shaped elsewhere. */
char	*route_error_body(const char *path, int status, const char *message,
	    void *arg);

#endif
