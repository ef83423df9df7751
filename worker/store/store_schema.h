/* store_schema.h - the database schema as numbered migration steps, applied at open under the driver's schema version. */
#ifndef SLUICE_STORE_SCHEMA_H
#define SLUICE_STORE_SCHEMA_H

#include "store.h"

/* The schema version this build migrates to (SQLite: PRAGMA
 * user_version; PostgreSQL: sluice_schema.version). */
int		 store_schema_version(void);

#endif
