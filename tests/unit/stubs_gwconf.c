/* stubs_gwconf.c - what gwconf.c needs from http.c, without the server. */
#include "../../gateway/http.h"

void
http_limits_default(struct http_limits *l)
{
	*l = (struct http_limits){ 16384, 100, 8192, 4194304, 10000, 60000,
	    75000, 1024, 1048576, 512 };
}
