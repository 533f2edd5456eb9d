/* The captures among a serial log's recovered files: see serial_capture.c. */
#ifndef PTBOOT_HOST_SERIAL_CAPTURE_H
#define PTBOOT_HOST_SERIAL_CAPTURE_H

#include "host/serial_recover.h"

/* After host_serial_finish, with c->dir set: says where each dump's files
 * went (more than one dump), and for each dump directory holding a
 * capture rebuilds what came incomplete, writes its manifest.txt and
 * decodes its flow. */
void host_serial_captures(struct serial_ctx *c);

#endif
