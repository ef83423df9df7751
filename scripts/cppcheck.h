/* cppcheck.h - loop macros from system headers, for cppcheck, which does not read them. */
#define TAILQ_FOREACH(var, head, field)					\
	for ((var) = (head)->tqh_first; (var) != NULL;			\
	    (var) = (var)->field.tqe_next)
#define json_array_foreach(array, index, value)				\
	for ((index) = 0; (index) < json_array_size(array) &&		\
	    ((value) = json_array_get(array, index)) != NULL; (index)++)
#define json_object_foreach(object, key, value)				\
	for ((key) = json_object_iter_key(json_object_iter(object));	\
	    (key) != NULL && ((value) = json_object_iter_value(		\
	    json_object_key_to_iter(key))) != NULL;			\
	    (key) = json_object_iter_key(json_object_iter_next(object,	\
	    json_object_key_to_iter(key))))
#define json_object_foreach_safe(object, n, key, value)			\
	for ((key) = json_object_iter_key(json_object_iter(object)),	\
	    (n) = json_object_iter_next(object,				\
	    json_object_key_to_iter(key));				\
	    (key) != NULL && ((value) = json_object_iter_value(		\
	    json_object_key_to_iter(key))) != NULL;			\
	    (key) = json_object_iter_key(n),				\
	    (n) = json_object_iter_next(object,				\
	    json_object_key_to_iter(key)))
