import { z } from 'zod';
interface In<P, Q, B> { params: P; query: Q; body: B }
type Auth<I> =
  | { public: string }
  | { org: (i: I) => string }
  | { project: (i: I) => string }
  | { resource: (i: I) => { project_id: string } | null | undefined; name: string };
type AccessOf<A> = A extends { org: unknown } ? 'orgrole' : A extends { project: unknown } ? { scope: string } : A extends { resource: (i: never) => infer R } ? { record: NonNullable<R>; scope: string } : undefined;
interface Decl<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, A extends Auth<In<z.output<P>, z.output<Q>, z.output<B>>>> {
  params?: P; query?: Q; body?: B;
  authorize: A;
  handle(input: In<z.output<P>, z.output<Q>, z.output<B>> & { access: AccessOf<A> }): unknown;
}
function route<A extends Auth<In<z.output<P>, z.output<Q>, z.output<B>>>, P extends z.ZodType = z.ZodType<Record<string, string>>, Q extends z.ZodType = z.ZodType<unknown>, B extends z.ZodType = z.ZodType<unknown>>(d: Decl<P, Q, B, A>) { return d; }
const rec = (id: string) => (id ? { project_id: 'p', secret: 1 } : null);
route({ query: z.object({ project_id: z.string() }), authorize: { project: ({ query }) => query.project_id }, handle({ access, query }) { const s: string = access.scope; const q: string = query.project_id; return [s, q]; } });
route({ params: z.object({ id: z.string() }), authorize: { resource: ({ params }) => rec(params.id), name: 'Connection' }, handle({ access }) { const n: number = access.record.secret; return n; } });
route({ authorize: { public: 'login' }, handle({ access }) { const u: undefined = access; return u; } });
route({ params: z.object({ id: z.string() }), authorize: { org: ({ params }) => params.id }, handle({ access }) { const u: 'orgrole' = access; return u; } });
route({ query: z.object({ project_id: z.string() }), authorize: { project: ({ query }) => query.project_id }, handle({ access, query }) { const n: number = query.project_id; return [n, access.record]; } });
route({ query: z.object({ project_id: z.string() }), authorize: { project: ({ query }) => query.nope }, handle() { return 1; } });
