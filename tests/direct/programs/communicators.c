/* Groups and communicators: split, split_type, dup (with attributes and
 * their copy callbacks), create, create_group, compare, names, group
 * algebra and rank translation, the predefined attributes, Init_thread,
 * Wtick. Same lines as under mpirun. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int copies = 0, deletes = 0;

static int copy_attr(MPI_Comm comm, int keyval, void* extra, void* in, void* out, int* flag) {
  (void)comm, (void)keyval, (void)extra;
  ++copies;
  *(void**)out = (void*)((long)in + 1);
  *flag = 1;
  return MPI_SUCCESS;
}

static int delete_attr(MPI_Comm comm, int keyval, void* value, void* extra) {
  (void)comm, (void)keyval, (void)value, (void)extra;
  ++deletes;
  return MPI_SUCCESS;
}

int main(int argc, char** argv) {
  int provided = -1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) printf("thread level at least funneled: %d\n", provided >= MPI_THREAD_FUNNELED);

  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
  int hrank, hsize, hsum;
  MPI_Comm_rank(half, &hrank);
  MPI_Comm_size(half, &hsize);
  MPI_Allreduce(&rank, &hsum, 1, MPI_INT, MPI_SUM, half);
  printf("%d: split color %d rank %d of %d sum %d\n", rank, rank % 2, hrank, hsize, hsum);
  MPI_Comm none;
  MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, 0, &none);
  printf("%d: undefined color %s\n", rank, none == MPI_COMM_NULL ? "null" : "a communicator");
  if (none != MPI_COMM_NULL) MPI_Comm_free(&none);

  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int nsize;
  MPI_Comm_size(node, &nsize);
  printf("%d: split_type gives a communicator: %d\n", rank, nsize >= 1);
  MPI_Comm_free(&node);

  /* Attributes copied on dup and deleted on free. */
  int keyval;
  MPI_Comm_create_keyval(copy_attr, delete_attr, &keyval, NULL);
  MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, (void*)(long)(rank + 40));
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  void* value = NULL;
  int flag = 0, result;
  MPI_Comm_get_attr(dup, keyval, &value, &flag);
  MPI_Comm_compare(MPI_COMM_WORLD, dup, &result);
  printf("%d: dup attr %d %ld copies %d compare %s\n", rank, flag, (long)value, copies,
         result == MPI_CONGRUENT ? "congruent" : "other");
  MPI_Comm_set_name(dup, "my duplicate");
  char name[MPI_MAX_OBJECT_NAME];
  int len;
  MPI_Comm_get_name(dup, name, &len);
  printf("%d: name %s (%d)\n", rank, name, len);
  MPI_Comm_free(&dup);
  MPI_Comm_delete_attr(MPI_COMM_WORLD, keyval);
  printf("%d: deletes %d\n", rank, deletes);
  MPI_Comm_free_keyval(&keyval);

  int* tag_ub;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
  printf("%d: tag_ub at least 32767: %d\n", rank, flag && *tag_ub >= 32767);

  /* Groups: the even ranks, in reverse. */
  MPI_Group world, evens, odds, both, inter, diff;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int neven = (size + 1) / 2;
  int* ranks = malloc(sizeof(int) * (size_t)neven);
  for (int i = 0; i < neven; ++i) ranks[i] = 2 * (neven - 1 - i);
  MPI_Group_incl(world, neven, ranks, &evens);
  MPI_Group_excl(world, neven, ranks, &odds);
  MPI_Group_union(odds, evens, &both);
  MPI_Group_intersection(world, evens, &inter);
  MPI_Group_difference(world, evens, &diff);
  int gsize, grank, usize, isize, dsize, cmp;
  MPI_Group_size(evens, &gsize);
  MPI_Group_rank(evens, &grank);
  MPI_Group_size(both, &usize);
  MPI_Group_size(inter, &isize);
  MPI_Group_size(diff, &dsize);
  MPI_Group_compare(world, both, &cmp);
  int translated = -1, zero = 0;
  MPI_Group_translate_ranks(evens, 1, &zero, world, &translated);
  printf("%d: evens %d rank %d union %d inter %d diff %d compare %s first even %d\n", rank, gsize,
         grank == MPI_UNDEFINED ? -1 : grank, usize, isize, dsize,
         cmp == MPI_SIMILAR ? "similar"
         : cmp == MPI_IDENT ? "ident"
                            : "unequal",
         translated);
  MPI_Comm ecomm;
  MPI_Comm_create(MPI_COMM_WORLD, evens, &ecomm);
  if (ecomm != MPI_COMM_NULL) {
    int er, es, esum;
    MPI_Comm_rank(ecomm, &er);
    MPI_Comm_size(ecomm, &es);
    MPI_Allreduce(&rank, &esum, 1, MPI_INT, MPI_SUM, ecomm);
    printf("%d: create rank %d of %d sum %d\n", rank, er, es, esum);
    MPI_Comm_free(&ecomm);
  } else {
    printf("%d: create null\n", rank);
  }
  /* Ranks outside the group may call too: they get MPI_COMM_NULL. */
  MPI_Comm gcomm;
  MPI_Comm_create_group(MPI_COMM_WORLD, evens, 5, &gcomm);
  if (gcomm == MPI_COMM_NULL) printf("%d: create_group null\n", rank);
  if (rank % 2 == 0) {
    int gr, gmax;
    MPI_Comm_rank(gcomm, &gr);
    MPI_Allreduce(&rank, &gmax, 1, MPI_INT, MPI_MAX, gcomm);
    printf("%d: create_group rank %d max %d\n", rank, gr, gmax);
    MPI_Comm_free(&gcomm);
  }
  MPI_Group_free(&world);
  MPI_Group_free(&evens);
  MPI_Group_free(&odds);
  MPI_Group_free(&both);
  MPI_Group_free(&inter);
  MPI_Group_free(&diff);
  free(ranks);
  MPI_Comm_free(&half);
  printf("%d: wtick positive %d\n", rank, MPI_Wtick() > 0);
  int initialized, finalized;
  MPI_Initialized(&initialized);
  MPI_Finalize();
  MPI_Finalized(&finalized);
  printf("%d: initialized %d finalized %d\n", rank, initialized, finalized);
  return 0;
}
