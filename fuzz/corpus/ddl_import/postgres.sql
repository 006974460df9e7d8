CREATE TABLE public."Order" (id serial PRIMARY KEY, "Customer" text);
COMMENT ON TABLE public."Order" IS 'orders';
COMMENT ON COLUMN public."Order"."Customer" IS 'who';
