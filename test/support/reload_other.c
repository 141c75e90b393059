/*
 * reload_other.c - the module test_reload.c loads once the plugin has gone
 * (on Linux; on Windows a system DLL): any module will do.
 */
__attribute__((visibility("default"))) int reload_other(void)
{
	return 1;
}
