/* The filter radius as a template argument: the launchers of lessons 03 to 06 run an
 * instantiation per radius 0..MAX_UNROLLED_RADIUS (ksize 1..15), whose loops over the
 * filter unroll so that every tap has a constant address, and a run-time-radius kernel
 * beyond it. Host code, for the launchers in a lesson's .cu files. */
#ifndef UNROLLED_RADIUS_CUH
#define UNROLLED_RADIUS_CUH

/* Radii with an unrolled instantiation: the common filter sizes 1..15. Each one is a
 * kernel of its own in the binary; larger radii take the run-time loop rather than
 * growing the binary further. */
#define MAX_UNROLLED_RADIUS 7

/* Variant::launch<R>(a) with R = radius, or runtime_radius(a) past the table. */
template <typename Variant, typename Args>
void launch_for_radius(int radius, const Args *a, void (*runtime_radius)(const Args *))
{
    static_assert(MAX_UNROLLED_RADIUS == 7, "one case per unrolled radius");
    switch (radius) {
    case 0: Variant::template launch<0>(a); break;
    case 1: Variant::template launch<1>(a); break;
    case 2: Variant::template launch<2>(a); break;
    case 3: Variant::template launch<3>(a); break;
    case 4: Variant::template launch<4>(a); break;
    case 5: Variant::template launch<5>(a); break;
    case 6: Variant::template launch<6>(a); break;
    case 7: Variant::template launch<7>(a); break;
    default: runtime_radius(a); break;
    }
}

#endif
