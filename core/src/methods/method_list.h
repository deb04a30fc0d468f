/* THE list of methods: one line per vic_method, in enum order.  A new
 * method adds its line here (and its enum value in vicinity.h when it is
 * public); its record (vic_method_ops, method_table.h) lives in its own
 * files.  names.c reads the names from here, method_table.c the records,
 * so that file names never depend on the files that do the work.
 *
 * X(enum value, name, alias, alias, title in messages, record) */
#ifndef VIC_METHOD_LIST_H
#define VIC_METHOD_LIST_H

#define VIC_METHOD_LIST(X)                                                                    \
  X(VIC_METHOD_BRUTE, "brute", "exact", "bruteforce", "exact brute force", vic__method_brute) \
  X(VIC_METHOD_GRID, "grid", NULL, NULL, "exact grid", vic__method_grid)                      \
  X(VIC_METHOD_NNDESCENT, "nndescent", "approximate", "nn-descent", "NN-Descent", vic__method_nndescent) \
  X(VIC_METHOD_GGNN, "ggnn", NULL, NULL, "GGNN", vic__method_ggnn)                            \
  X(VIC_METHOD_GNND, "gnnd", NULL, NULL, "GNND", vic__method_gnnd)                            \
  X(VIC_METHOD_GRNND, "grnnd", NULL, NULL, "GRNND", vic__method_grnnd)                        \
  X(VIC_METHOD_TSDG, "tsdg", NULL, NULL, "TSDG", vic__method_tsdg)                            \
  X(VIC_METHOD_RANDOM, "random", NULL, NULL, "random graph", vic__method_random)

#endif
