/*
 * cli_output.h — how txc writes its output files (txc(1), OUTPUTS). Linked
 * only into txc; nothing here prints or exits.
 *
 * Call order: out_same_file to refuse outputs that name the program, an
 * input or another output; out_check on every output before anything is
 * read or written; out_write_all once, with every output; out_release.
 */
#ifndef TX_CLI_OUTPUT_H
#define TX_CLI_OUTPUT_H

#include <stddef.h>
#include <sys/types.h>

typedef enum {
    OUT_FILE,   /* a regular file (or one to create): written aside, renamed into place */
    OUT_DEVICE, /* a device or a pipe: written in place, never replaced */
    OUT_STDOUT  /* standard output (set by the caller for "-") */
} out_kind;

/* Writes one output's contents to FD, which NAME names. Returns 0, or -1
   with a message in ERR (or ERR empty and errno set). */
typedef int (*out_writer)(int fd, const char *name, const void *arg, char *err, size_t errlen);

typedef struct {
    const char *name;  /* the path as given, for messages */
    out_writer write;  /* its contents */
    const void *arg;   /* for WRITE */
    out_kind kind;     /* OUT_STDOUT set by the caller; else set by out_check */
    /* set by out_check and out_write_all */
    char *target;      /* the file replaced: NAME, or where its symbolic links lead */
    int exists;        /* TARGET exists: its mode is kept */
    mode_t mode;
    char *tmp;         /* TARGET.tmp.XXXXXX while it is written */
    int fd;
} out_file;

/* 1 if paths A and B name the same file: the same device and inode for
   files that exist (links, hard links, "dir/../x" all count), the same
   path once symbolic links and the directory are resolved for files that
   do not exist yet; else 0; -1 if out of memory. */
int out_same_file(const char *a, const char *b);

/* Checks that O can be written, before anything is: it is not a directory
   nor a read-only file, and its directory exists and is writable (a
   device or pipe must be writable). Sets O's kind and target. Returns 0, or
   -1 with a message naming O in ERR. */
int out_check(out_file *o, char *err, size_t errlen);

/* Writes the N checked outputs, all or nothing: a temporary beside each
   regular file (mode kept if it replaces one, 0666 less the umask if new),
   all created before any is written, each written in full and synced;
   then devices, pipes and standard output; then every temporary renamed
   into place, with fatal signals held until the last rename. Any failure
   before the renames removes every temporary and replaces nothing; so does
   a fatal signal, which then ends the process as it would have. Returns 0,
   or -1 with a message in ERR. */
int out_write_all(out_file *o, int n, char *err, size_t errlen);

/* Frees what out_check and out_write_all allocated in the N outputs. */
void out_release(out_file *o, int n);

#endif /* TX_CLI_OUTPUT_H */
