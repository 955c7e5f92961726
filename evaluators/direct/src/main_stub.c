/* Linked into every program built with the poems-mpi* wrappers (with
 * -Wl,--wrap=main -Wl,--wrap=exit): the program's main and exit pass through
 * libpoems_mpi.so, which runs main as the ranks' threads under
 * --isolation threads and calls it as it is otherwise (src/launch.cpp). */
int __real_main(int argc, char** argv, char** envp);
int poems_direct_main(int argc, char** argv, char** envp, int (*real_main)(int, char**, char**));

int __wrap_main(int argc, char** argv, char** envp) { return poems_direct_main(argc, argv, envp, __real_main); }
