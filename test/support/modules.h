/*
 * modules.h - loading a module (a plugin, a DLL) and finding its functions,
 * the same way on Windows and elsewhere: test_late_runtime and test_reload
 * load modules once the program runs.
 *
 * - load_module(), load_error(), unload_module(), is_loaded()
 * - find_in_module(): a function of the module, copied into a function
 *   pointer of the caller's type (C does not convert void * to one)
 * - beside_program(): the path of a module in the program's folder
 */
#ifndef TEST_MODULES_H
#define TEST_MODULES_H

#include <stdio.h>
#include <string.h>

#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

typedef FARPROC module_function;

static inline void *load_module(const char *path)
{
	return LoadLibraryA(path);
}

static inline const char *load_error(void)
{
	static char why[32];
	snprintf(why, sizeof why, "error %lu", (unsigned long)GetLastError());
	return why;
}

static inline module_function find_function(void *module, const char *name)
{
	return GetProcAddress((HMODULE)module, name);
}

static inline int unload_module(void *module)
{
	return FreeLibrary((HMODULE)module) ? 0 : -1;
}

static inline int is_loaded(const char *path)
{
	return GetModuleHandleA(path) != NULL;
}

/* LoadLibrary looks in the program's folder first. */
static inline void beside_program(char *path, size_t size, const char *name, const char *argv0)
{
	(void)argv0;
	snprintf(path, size, "%s", name);
}
#else
#include <dlfcn.h>

typedef void *module_function; /* POSIX makes it convertible; C does not */

static inline void *load_module(const char *path)
{
	return dlopen(path, RTLD_NOW);
}

static inline const char *load_error(void)
{
	return dlerror();
}

static inline module_function find_function(void *module, const char *name)
{
	return dlsym(module, name);
}

static inline int unload_module(void *module)
{
	return dlclose(module);
}

/* dlopen with RTLD_NOLOAD opens only what is loaded already. */
static inline int is_loaded(const char *path)
{
	void *module = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
	if (module != NULL)
		dlclose(module);
	return module != NULL;
}

static inline void beside_program(char *path, size_t size, const char *name, const char *argv0)
{
	const char *slash = strrchr(argv0, '/');
	int dir = slash ? (int)(slash - argv0 + 1) : 0;
	snprintf(path, size, "%.*s%s", dir, argv0, name);
	if (dir == 0) /* dlopen would search the library path */
		snprintf(path, size, "./%s", name);
}
#endif

/* Copies the module's function called name, as find_function returns it,
 * into *func (size bytes): 0 if the module has none, or not of that size. */
static inline int find_in_module(void *module, const char *name, void *func, size_t size)
{
	module_function found = find_function(module, name);
	if (found == NULL || size != sizeof found)
		return 0;
	memcpy(func, &found, size);
	return 1;
}

#endif
