/** One line of the bench's output: which figure, and its numbers. */
export type Figure = Record<string, unknown> & { figure: string };
