/* exit() in a program built with the poems-mpi* wrappers (-Wl,--wrap=exit):
 * a rank that is a thread ends alone; otherwise it is the C library's exit. */
void poems_direct_exit(int code) __attribute__((noreturn));

void __wrap_exit(int code) { poems_direct_exit(code); }
