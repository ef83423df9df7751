/* uuid.h - random (version 4) UUIDs for request ids. */
#ifndef SLUICE_UUID_H
#define SLUICE_UUID_H

#define UUID_STRLEN	36
#define UUID_BUFLEN	37

/* Write a new UUIDv4 as 36 lower-case characters plus NUL into out. */
void	uuid_new(char out[UUID_BUFLEN]);

/* Same 128 random bits as 32 hex digits (no dashes) plus NUL. */
void	uuid_new_hex(char out[33]);

#endif
